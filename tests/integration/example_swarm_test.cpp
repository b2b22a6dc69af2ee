// examples/swarm run exactly as its README says, on a fleet of two hosts
// that are network namespaces with their own sshd and address
// (support/netns_fleet.h), named node0 and node1 by an ssh configuration
// (RUNNER_SSH_CONFIG, as ~/.ssh/config would), reached as a user of their
// own (support/remote_user.h) whose home both share. Shaping a node's
// network takes CAP_NET_ADMIN, which a cluster gives its users through
// sudo: here the user's ~/bin holds a copy of tc with that capability
// (setcap) and a `sudo` that runs what it is given, first on its PATH.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/example.h"
#include "support/netns_fleet.h"
#include "support/remote_user.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::ProcessResult;

// Whether `text` is a whole number, as a TSV cell or a results cell must be.
bool is_number(const std::string& text) {
  std::size_t used = 0;
  try {
    (void)std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used == text.size();
}

// The lines of a TSV file, each split at its tabs.
std::vector<std::vector<std::string>> tsv_lines(const std::string& text) {
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> cells;
    std::istringstream cells_in(line);
    for (std::string cell; std::getline(cells_in, cell, '\t');) cells.push_back(cell);
    lines.push_back(cells);
  }
  return lines;
}

struct SwarmExample : ::testing::Test {
  testing::TempDir dir;
  std::unique_ptr<testing::NetnsFleet> fleet;
  std::unique_ptr<testing::RemoteUser> user;
  testing::Example example{"swarm"};

  // The user's ~/bin: a tc that may change qdiscs, and a sudo that runs it.
  // False when this machine has no setcap.
  bool give_user_tc() const {
    if (::access("/usr/sbin/setcap", X_OK) != 0) return false;
    std::string bin = user->home() + "/bin";
    std::filesystem::create_directories(bin);
    std::filesystem::copy_file("/usr/sbin/tc", bin + "/tc");
    ProcessResult capable = testing::run_process({{"setcap", "cap_net_admin+ep", bin + "/tc"}});
    EXPECT_EQ(capable.status, 0) << capable.err;
    user->write_file("bin/sudo", "#!/bin/sh\n[ \"$1\" = -n ] && shift\nexec \"$@\"\n");
    std::filesystem::permissions(bin + "/sudo", std::filesystem::perms::owner_all);
    testing::run_process({{"chown", user->name() + ":users", bin}});
    user->write_file(".cshrc", "setenv PATH ${HOME}/bin:${PATH}\n");
    return capable.status == 0;
  }

  // What `tc qdisc show` says on each node.
  std::string qdiscs() const {
    std::string shown;
    for (int i = 0; i < fleet->size(); ++i) shown += fleet->run_on(i, {"tc", "qdisc", "show"}).out;
    return shown;
  }
};

TEST_F(SwarmExample, CoordinatorShapingServersClientsResultsAndTeardownAsTheReadmeSays) {
  std::string why_not;
  fleet = testing::NetnsFleet::start(dir, 2, why_not);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  user = testing::RemoteUser::create("/usr/bin/tcsh");
  RUNNER_REQUIRE_REMOTE_USER(user, "/usr/bin/tcsh");
  if (!give_user_tc()) {
    if (testing::sshd_required())
      FAIL() << "no setcap (install libcap2-bin), and CI=true requires it";
    GTEST_SKIP() << "no setcap (install libcap2-bin)";
  }
  std::map<std::string, std::string> env = fleet->admit(*user);

  std::string work = example.copy_into(dir);
  std::vector<std::string> commands = example.commands();
  ASSERT_EQ(commands, (std::vector<std::string>{
                          "runner push swarm",
                          "runner queue",
                          "runner results",
                      }));
  std::vector<ProcessResult> ran = example.run_all(commands, work, env, 3min);
  ASSERT_EQ(ran.size(), commands.size());
  const std::string& queue = ran[1].out;
  const std::string& queue_err = ran[1].err;

  // push: the programs, in the home both nodes share.
  EXPECT_EQ(testing::count(ran[0].out, "] node"), 2) << ran[0].out;
  EXPECT_TRUE(std::filesystem::is_regular_file(user->home() + "/swarm/client.py"));

  // The coordinator gave its address, a node's, to the jobs after it.
  std::smatch ready;
  ASSERT_TRUE(std::regex_search(queue_err, ready,
                                std::regex("<<coordinator\\.addr>> = (10\\.[0-9.]+):([0-9]+)")))
      << queue_err;
  std::set<std::string> nodes = {fleet->address(0), fleet->address(1)};
  EXPECT_EQ(nodes.count(ready[1]), 1u) << ready[0];
  // Every node shaped its interface with tbf, and both servers joined the
  // swarm through the coordinator; nothing was warned of (a failed after:).
  EXPECT_EQ(testing::count(queue, "shaping fleet0: qdisc tbf"), 2) << queue;
  EXPECT_EQ(queue_err.find("warning"), std::string::npos) << queue_err;
  EXPECT_EQ(testing::count(queue, "joined the swarm at " + ready[1].str() + ":"), 2) << queue;
  EXPECT_EQ(testing::count(queue, "through 2 servers: "), 8) << queue;

  // results: a row per client, its TSV's numbers beside its parameters.
  const std::string& results = ran[2].out;
  EXPECT_EQ(results.substr(0, results.find('\n')),
            "id,batch,micro_batches,processes,host,slot,outcome,exit,duration_s,attempts,"
            "file.batch,file.micro_batches,file.processes,prefix_length,output_length,"
            "throughput,latency");
  std::set<std::string> configurations;
  for (auto& row : testing::csv_rows(results)) {
    EXPECT_EQ(row.count("<malformed>"), 0u) << row["<malformed>"];
    configurations.insert(row["batch"] + "/" + row["micro_batches"] + "/" + row["processes"]);
    EXPECT_TRUE(row["host"] == "node0" || row["host"] == "node1") << results;
    EXPECT_EQ(row["outcome"], "succeeded") << results;
    EXPECT_EQ(row["file.batch"], row["batch"]) << results;
    EXPECT_EQ(row["file.micro_batches"], row["micro_batches"]) << results;
    EXPECT_EQ(row["file.processes"], row["processes"]) << results;
    EXPECT_EQ(row["prefix_length"], "32") << results;
    EXPECT_EQ(row["output_length"], "16") << results;
    for (const char* measured : {"throughput", "latency"}) {
      ASSERT_TRUE(is_number(row[measured])) << measured << " in\n" << results;
      EXPECT_GT(std::stod(row[measured]), 0) << measured << " in\n" << results;
    }
    // The TSV came back: a header of the seven columns, a row of numbers.
    std::string tsv = work + "/queue.runner/outputs/" + row["id"] + "/results/b" + row["batch"] +
                      "-m" + row["micro_batches"] + "-p" + row["processes"] + ".tsv";
    ASSERT_TRUE(std::filesystem::is_regular_file(tsv)) << tsv;
    std::ifstream tsv_file(tsv);
    std::stringstream tsv_text;
    tsv_text << tsv_file.rdbuf();
    auto lines = tsv_lines(tsv_text.str());
    ASSERT_EQ(lines.size(), 2u) << tsv;
    EXPECT_EQ(lines[0],
              (std::vector<std::string>{"batch", "micro_batches", "processes", "prefix_length",
                                        "output_length", "throughput", "latency"}));
    ASSERT_EQ(lines[1].size(), 7u) << tsv;
    for (const std::string& cell : lines[1]) EXPECT_TRUE(is_number(cell)) << cell << " in " << tsv;
  }
  EXPECT_EQ(configurations, (std::set<std::string>{"2/1/1", "2/1/2", "2/2/1", "2/2/2", "8/1/1",
                                                   "8/1/2", "8/2/1", "8/2/2"}))
      << results;

  // Every service was stopped and nothing of the run is left on the nodes;
  // every qdisc is gone.
  EXPECT_TRUE(testing::wait_until(
      [&] { return testing::sh_output("ps -u " + user->name() + " -o pid=").empty(); }, 10s))
      << testing::sh_output("ps -u " + user->name() + " -o pid,args");
  EXPECT_TRUE(testing::live_processes_starting("python3 swarm/").empty());
  EXPECT_EQ(qdiscs().find("tbf"), std::string::npos) << qdiscs();
}

}  // namespace
}  // namespace runner
