// The real binary running jobs that span hosts (`nodes:`), with the real
// programs users launch with it: torchrun (DDP over gloo) and Open MPI's
// mpirun. Each host is a network namespace with its own sshd and address
// (support/netns_fleet.h), so ranks really talk over a network, and the
// test's directory is the fleet's shared file system. Needs root.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "runner/state/journal.h"
#include "support/netns_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

// Every rank of the gang sums rank+1 over all ranks, so a world of N prints
// N(N+1)/2, and says where it ran.
constexpr const char* k_all_reduce_script = R"(import socket
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(value)
print(f"rank {dist.get_rank()} of {dist.get_world_size()} on {socket.gethostname()}"
      f" all-reduced {value.item():g}", flush=True)
dist.destroy_process_group()
)";

struct NetnsMultiNode : ::testing::Test {
  testing::TempDir dir;
  std::string why_not;
  std::unique_ptr<testing::NetnsFleet> fleet;

  void start_fleet(int hosts, int slots) {
    fleet = testing::NetnsFleet::start(dir, hosts, why_not);
    if (fleet) fleet->write_hosts(slots);
  }

  testing::ProcessResult run_queue() {
    testing::ProcessSpec spec = fleet->runner({"queue", "--no-status"});
    spec.timeout = 60s;
    return testing::run_process(spec);
  }

  // Runs queue.yaml with a 2-node torchrun job as a user writes it, after
  // `before` and with more `keys`. The system python (the one with torch)
  // explicitly; gloo on the fleet's interface. `--redirects=1 --tee=1`:
  // Debian's torch 1.13 on Python 3.11 crashes on the default "no
  // redirection" (Std.from_str("0") is None there), so each worker's stdout
  // goes through a file and is tailed back, "[default0]:...". A short
  // monitor interval, or the agents notice their workers' end 5 s late.
  testing::ProcessResult run_torchrun_queue(const std::string& before, const std::string& keys) {
    dir.write("queue.yaml",
              "- command: " + before + "GLOO_SOCKET_IFNAME=" + testing::NetnsFleet::k_interface +
                  " OMP_NUM_THREADS=1 /usr/bin/python3 -m torch.distributed.run"
                  " --nnodes=<<nnodes>> --node_rank=<<rank>>"
                  " --master_addr=<<master_addr>> --master_port=<<master_port>>"
                  " --nproc_per_node=<<slots_per_node>> --monitor_interval=0.5"
                  " --redirects=1 --tee=1 " +
                  dir.write("all_reduce.py", k_all_reduce_script) + "\n  nodes: 2\n" + keys);
    return run_queue();
  }

  std::vector<nlohmann::json> journal(const std::string& event) const {
    std::vector<nlohmann::json> found;
    for (auto& record : testing::value_of(read_journal(dir.file("queue.runner/journal.jsonl"))))
      if (record.value("event", "") == event) found.push_back(record);
    return found;
  }
  std::string log(int job, int rank) const {
    return dir.read("queue.runner/logs/" + std::to_string(job) + "." + std::to_string(rank) +
                    ".log");
  }
};

// The fleet itself, with plain jobs: each host is reached at its own
// address and is a machine of its own (its own interface and hostname).
TEST_F(NetnsMultiNode, EachHostOfTheFleetRunsJobsInItsOwnNamespace) {
  start_fleet(3, 1);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  dir.write("queue.yaml",
            "- command: echo \"job <<i>> on $(hostname) at $(ip -4 -o addr show dev fleet0 | "
            "awk '{print $4}')\"; sleep 1\n"
            "  i: [0, 1, 2]\n");
  testing::ProcessResult r = run_queue();
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  for (int i = 0; i < 3; ++i) {
    std::string where =
        "on " + testing::NetnsFleet::hostname(i) + " at " + fleet->address(i) + "/24";
    EXPECT_NE(r.out.find(where), std::string::npos) << where << " not in:\n" << r.out;
  }
}

TEST_F(NetnsMultiNode, TheFleetLeavesNoNamespaceOrAddressBehind) {
  start_fleet(2, 1);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  std::string bridge_address =
      "inet " + fleet->subnet().substr(0, fleet->subnet().rfind('.')) + ".1/";
  std::string last_namespace = "\n" + fleet->namespace_name(1) + "\n";
  auto namespaces = [] { return "\n" + testing::sh_output("ip netns list | cut -d' ' -f1"); };
  EXPECT_NE(testing::sh_output("ip -4 -o addr show").find(bridge_address), std::string::npos);
  EXPECT_NE(namespaces().find(last_namespace), std::string::npos);
  fleet.reset();
  EXPECT_EQ(testing::sh_output("ip -4 -o addr show").find(bridge_address), std::string::npos);
  EXPECT_EQ(namespaces().find(last_namespace), std::string::npos);
}

TEST_F(NetnsMultiNode, TorchrunAllReducesOverGlooAcrossTwoHosts) {
  start_fleet(2, 2);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  testing::ProcessResult r = run_torchrun_queue("", "  slots: 2\n");
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  // 2 hosts x 2 processes: ranks 0..3 sum 1+2+3+4.
  EXPECT_NE(log(1, 0).find("rank 0 of 4 on node"), std::string::npos) << log(1, 0);
  EXPECT_NE(log(1, 0).find("all-reduced 10"), std::string::npos) << log(1, 0);
  EXPECT_NE(log(1, 1).find("rank 3 of 4 on node"), std::string::npos) << log(1, 1);
  EXPECT_NE(log(1, 1).find("all-reduced 10"), std::string::npos) << log(1, 1);
}

TEST_F(NetnsMultiNode, TwoTorchrunJobsOnTheSameHostsGetDifferentMasterPorts) {
  start_fleet(2, 2);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  testing::ProcessResult r = run_torchrun_queue("echo job <<i>>; ", "  i: [1, 2]\n");
  ASSERT_EQ(r.status, 0) << r.err << r.out;

  // Both started before either ended: they shared the hosts.
  std::vector<std::string> order;
  for (auto& record : testing::value_of(read_journal(dir.file("queue.runner/journal.jsonl"))))
    order.push_back(record.value("event", ""));
  auto second_start =
      std::find(std::find(order.begin(), order.end(), "job_start") + 1, order.end(), "job_start");
  EXPECT_LT(second_start - order.begin(),
            std::find(order.begin(), order.end(), "job_end") - order.begin());

  std::set<std::string> ports;
  const std::regex master_port("--master_port=([0-9]+)");
  for (const auto& start : journal("job_start")) {
    std::smatch port;
    std::string command = start.value("command", "");
    ASSERT_TRUE(std::regex_search(command, port, master_port)) << command;
    ports.insert(port[1]);
  }
  EXPECT_EQ(ports.size(), 2u) << "master ports of the two jobs are the same";
  // 2 hosts x 1 process each: ranks 0..1 sum 1+2.
  for (int job : {1, 2})
    for (int rank : {0, 1})
      EXPECT_NE(log(job, rank).find("all-reduced 3"), std::string::npos)
          << "job " << job << " rank " << rank << ":\n"
          << log(job, rank);
}

TEST_F(NetnsMultiNode, ARankThatFailsStopsTheOthersAndIsNamed) {
  start_fleet(2, 1);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  // A duration no other test sleeps, to find its processes.
  dir.write("queue.yaml",
            "- command: if [ <<rank>> = 1 ]; then sleep 1; exit 3; fi; sleep 300.125\n"
            "  nodes: 2\n");
  auto began = std::chrono::steady_clock::now();
  testing::ProcessResult r = run_queue();
  auto took = std::chrono::steady_clock::now() - began;
  EXPECT_EQ(r.status, 1) << r.err << r.out;
  EXPECT_LT(took, 20s) << "rank 0 was not stopped when rank 1 failed";
  EXPECT_EQ(testing::live_processes_running("sleep 300.125"), 0);
  const std::regex failure_named("rank 1.*exit 3|exit 3.*rank 1");
  EXPECT_TRUE(std::regex_search(r.out + r.err, failure_named)) << r.err << r.out;
  std::vector<nlohmann::json> ends = journal("job_end");
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0]["failed_rank"], 1) << ends[0].dump();
  EXPECT_EQ(ends[0]["exit"], 3) << ends[0].dump();
}

TEST_F(NetnsMultiNode, MpirunOnRankZeroReachesEveryHostOverSsh) {
  start_fleet(3, 1);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  // Open MPI refuses root without both the flag and the variables; its
  // daemons reach the other hosts with the fleet's own ssh configuration,
  // and its traffic stays on the fleet's subnet.
  dir.write("queue.yaml",
            "- command: >-\n"
            "    if [ <<rank>> = 0 ]; then\n"
            "    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
            "    mpirun --allow-run-as-root --hostfile <<hostfile>>\n"
            "    --mca plm_rsh_agent \"ssh -F " +
                fleet->ssh_config_file() +
                "\"\n"
                "    --mca btl self,tcp --mca btl_tcp_if_include " +
                fleet->subnet() + " --mca oob_tcp_if_include " + fleet->subnet() +
                "\n"
                "    sh -c 'echo \"mpi rank $OMPI_COMM_WORLD_RANK of $OMPI_COMM_WORLD_SIZE"
                " on $(hostname)\"';\n"
                "    fi\n"
                "  nodes: 3\n");
  testing::ProcessResult r = run_queue();
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  std::string launcher_log = log(1, 0);
  for (int i = 0; i < 3; ++i) {
    std::string rank = "mpi rank " + std::to_string(i) + " of 3 on node";
    EXPECT_NE(launcher_log.find(rank), std::string::npos) << rank << " not in:\n" << launcher_log;
    std::string host = "on " + testing::NetnsFleet::hostname(i) + "\n";
    EXPECT_NE(launcher_log.find(host), std::string::npos) << host << " not in:\n" << launcher_log;
  }
  EXPECT_EQ(log(1, 1), "");
  EXPECT_EQ(log(1, 2), "");
}

}  // namespace
}  // namespace runner
