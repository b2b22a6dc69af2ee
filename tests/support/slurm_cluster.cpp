#include "support/slurm_cluster.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "support/daemon.h"
#include "support/loopback_port.h"
#include "support/sshd.h"
#include "support/wait.h"

namespace runner::testing {

namespace {

using namespace std::chrono_literals;

constexpr const char* k_programs[] = {"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
                                      "/usr/bin/srun", "/usr/bin/unshare"};

// A random key for munged, readable by its owner only (munged refuses others).
void write_munge_key(const std::string& path) {
  std::random_device random;
  std::string key(1024, '\0');
  for (char& c : key) c = static_cast<char>(random());
  std::ofstream(path, std::ios::binary) << key;
  ::chmod(path.c_str(), 0400);
}

}  // namespace

std::unique_ptr<SlurmCluster> SlurmCluster::start(const TempDir& dir, std::string& why_not,
                                                  int gpus) {
  if (::geteuid() != 0) {
    why_not = "a test Slurm cluster needs root (mknod, SlurmUser=root)";
    return nullptr;
  }
  for (const char* program : k_programs) {
    if (::access(program, X_OK) != 0) {
      why_not = fmt::format("no {} (install slurmctld slurmd slurm-client munge)", program);
      return nullptr;
    }
  }
  std::unique_ptr<SlurmCluster> cluster(new SlurmCluster(dir));
  cluster->write_config(gpus);
  const std::string munge = dir.file("munge");
  cluster->m_daemons.push_back(cluster->launch(
      {"/usr/sbin/munged", "-F", "-f", "--key-file=" + munge + "/munge.key",
       "--socket=" + munge + "/socket", "--pid-file=" + munge + "/munged.pid",
       "--log-file=" + munge + "/munged.log", "--seed-file=" + munge + "/munged.seed"},
      munge + "/munged.out"));
  if (!wait_until([&] { return std::filesystem::exists(munge + "/socket"); }, 5s))
    throw std::runtime_error("munged did not start:\n" + cluster->logs());
  const std::string conf = dir.file("slurm/slurm.conf");
  cluster->m_daemons.push_back(
      cluster->launch({"/usr/sbin/slurmctld", "-D", "-f", conf}, dir.file("slurm/slurmctld.out")));
  const std::string hosts = cluster->write_hosts_file();
  for (int n = 1; n <= k_nodes; ++n) {
    std::string node = fmt::format("n{}", n);
    std::filesystem::create_directories(dir.file("slurm/spool/" + node));
    // In a mount namespace of its own where /etc/hosts names the nodes:
    // the steps it starts see it too.
    cluster->m_daemons.push_back(cluster->launch(
        {"/usr/bin/unshare", "--mount", "/bin/sh", "-c",
         "mount --bind \"$0\" /etc/hosts && exec \"$@\"", hosts, "/usr/sbin/slurmd", "-D", "-N",
         node, "-f", conf},
        dir.file("slurm/slurmd." + node + ".out")));
  }
  if (!wait_until([&] { return cluster->nodes_idle(); }, 20s))
    throw std::runtime_error("the Slurm nodes did not become idle:\n" + cluster->logs());
  return cluster;
}

void SlurmCluster::write_config(int gpus) {
  const std::string slurm = m_dir.file("slurm");
  std::filesystem::create_directories(slurm + "/state");
  std::filesystem::create_directories(slurm + "/dev");
  std::filesystem::create_directories(m_dir.file("munge"));
  ::chmod(m_dir.file("munge").c_str(), 0700);
  write_munge_key(m_dir.file("munge/munge.key"));
  for (int g = 0; g < gpus; ++g) {
    std::string device = fmt::format("{}/dev/gpu{}", slurm, g);
    // Major 1, minor 3 is /dev/null: a device that any process may open.
    if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
      throw std::runtime_error(fmt::format("mknod {}: {}", device, std::strerror(errno)));
  }
  std::string nodes;
  for (int n = 1; n <= k_nodes; ++n)
    nodes += fmt::format(
        "NodeName=n{} NodeHostname=localhost NodeAddr=127.0.0.1 Port={} CPUs=8 Gres=gpu:{} "
        "State=UNKNOWN\n",
        n, unused_port(), gpus);
  m_dir.write("slurm/slurm.conf",
              fmt::format(R"(# A test cluster of one machine: every node a slurmd on 127.0.0.1.
ClusterName=runnertest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={dir}/munge/socket,cred_expire=5
CredType=cred/munge
StateSaveLocation={dir}/slurm/state
SlurmdSpoolDir={dir}/slurm/spool/%n
SlurmctldPidFile={dir}/slurm/slurmctld.pid
SlurmdPidFile={dir}/slurm/slurmd.%n.pid
SlurmctldLogFile={dir}/slurm/slurmctld.log
SlurmdLogFile={dir}/slurm/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=2
KillWait=2
{nodes}PartitionName=test Nodes=n[1-{count}] Default=YES MaxTime=INFINITE State=UP
)",
                          fmt::arg("ctld_port", unused_port()),
                          fmt::arg("slurmd_port", unused_port()), fmt::arg("dir", m_dir.path()),
                          fmt::arg("nodes", nodes), fmt::arg("count", k_nodes)));
  m_dir.write("slurm/gres.conf",
              fmt::format("AutoDetect=off\nNodeName=n[1-{}] Name=gpu File={}/dev/gpu[0-{}]\n",
                          k_nodes, slurm, gpus - 1));
}

std::string SlurmCluster::write_hosts_file() const {
  std::ifstream system_hosts("/etc/hosts");
  std::stringstream text;
  text << system_hosts.rdbuf();
  text << "\n# the test cluster's nodes\n127.0.0.1";
  for (int n = 1; n <= k_nodes; ++n) text << fmt::format(" n{}", n);
  text << "\n";
  return m_dir.write("slurm/hosts", text.str());
}

pid_t SlurmCluster::launch(const std::vector<std::string>& args, const std::string& log) {
  return launch_daemon(args, log, env());
}

std::map<std::string, std::string> SlurmCluster::env() const {
  std::map<std::string, std::string> environment{{"SLURM_CONF", m_dir.file("slurm/slurm.conf")}};
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
                           "SLURM_STEP_ID", "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS"})
    environment[name] = "";
  return environment;
}

ProcessResult SlurmCluster::run(std::vector<std::string> args) const {
  ProcessSpec spec{std::move(args)};
  spec.env = env();
  spec.timeout = 30s;
  return run_process(spec);
}

std::string SlurmCluster::allocate(std::vector<std::string> args) const {
  args.insert(args.begin(), {"/usr/bin/salloc", "--no-shell"});
  ProcessResult result = run(std::move(args));
  std::smatch granted;
  if (!std::regex_search(result.err, granted, std::regex(R"(Granted job allocation (\d+))")))
    return {};
  return granted[1];
}

std::vector<std::string> SlurmCluster::runner_steps(const std::string& job_id) const {
  ProcessResult steps = run({"/usr/bin/squeue", "-h", "-s", "-j", job_id, "-o", "%i %j"});
  std::vector<std::string> ids;
  std::istringstream lines(steps.out);
  for (std::string id, name; lines >> id >> name;)
    if (name.rfind("runner-", 0) == 0) ids.push_back(id);
  return ids;
}

bool SlurmCluster::nodes_idle() const {
  ProcessResult states = run({"/usr/bin/sinfo", "-h", "-N", "-o", "%t"});
  std::istringstream lines(states.out);
  int idle = 0;
  for (std::string line; std::getline(lines, line);)
    if (line == "idle") ++idle;
  return states.status == 0 && idle == k_nodes;
}

std::string SlurmCluster::logs() const {
  std::string text;
  for (const char* name : {"munge/munged.log", "slurm/slurmctld.log", "slurm/slurmctld.out",
                           "slurm/slurmd.n1.log", "slurm/slurmd.n1.out"}) {
    std::string log = m_dir.read(name);
    if (log.size() > 4000) log = log.substr(log.size() - 4000);
    text += fmt::format("--- {}\n{}", name, log);
  }
  return text;
}

SlurmCluster::~SlurmCluster() {
  // Steps a test left running end with their jobs, before the daemons go.
  ProcessResult jobs = run({"/usr/bin/squeue", "-h", "-o", "%i"});
  std::istringstream ids(jobs.out);
  for (std::string id; std::getline(ids, id);)
    if (!id.empty()) static_cast<void>(run({"/usr/bin/scancel", id}));
  static_cast<void>(wait_until(
      [&] {
        return run({"/usr/bin/squeue", "-h", "-o", "%i"}).out.empty();
      },
      10s));
  for (auto it = m_daemons.rbegin(); it != m_daemons.rend(); ++it) stop_daemon(*it);
}

}  // namespace runner::testing
