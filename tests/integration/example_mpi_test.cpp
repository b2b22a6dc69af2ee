// examples/mpi run exactly as its README says, on a fleet of two hosts
// that are network namespaces with their own sshd and address
// (support/netns_fleet.h), reached as a user whose login shell is tcsh
// (support/remote_user.h), named node0 and node1 by an ssh configuration
// (RUNNER_SSH_CONFIG, as ~/.ssh/config would). The user's side of the
// nodes is what a cluster gives: a key and known hosts with which mpirun's
// ssh reaches the other node, a home shared by both, and (for `runner
// check`) a stand-in nvidia-smi listing two GPUs on its PATH (~/.cshrc).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "support/example.h"
#include "support/netns_fleet.h"
#include "support/remote_user.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::ProcessResult;

struct MpiExample : ::testing::Test {
  testing::TempDir dir;
  std::unique_ptr<testing::NetnsFleet> fleet;
  std::unique_ptr<testing::RemoteUser> user;
  testing::Example example{"mpi"};

  // A folder of the user's home, owned by the user.
  void make_folder(const std::string& relative) const {
    std::filesystem::create_directories(user->home() + "/" + relative);
    testing::run_process({{"chown", user->name() + ":users", user->home() + "/" + relative}});
  }
  void write_user_file(const std::string& relative, const std::string& text,
                       std::filesystem::perms perms) const {
    user->write_file(relative, text);
    std::filesystem::permissions(user->home() + "/" + relative, perms);
  }
};

TEST_F(MpiExample, CheckBuildRunTheRingAndACrashingRankAsTheReadmeSays) {
  std::string why_not;
  fleet = testing::NetnsFleet::start(dir, 2, why_not);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  user = testing::RemoteUser::create("/usr/bin/tcsh");
  RUNNER_REQUIRE_REMOTE_USER(user, "/usr/bin/tcsh");
  using std::filesystem::perms;
  std::map<std::string, std::string> env = fleet->admit(*user);
  make_folder(".ssh");
  make_folder("bin");
  std::ifstream key(fleet->key());
  std::stringstream key_text;
  key_text << key.rdbuf();
  write_user_file(".ssh/id_fleet", key_text.str(), perms::owner_read | perms::owner_write);
  write_user_file(".ssh/known_hosts", dir.read("known_hosts"),
                  perms::owner_read | perms::owner_write);
  write_user_file(".ssh/config",
                  "Host *\n  IdentityFile ~/.ssh/id_fleet\n  BatchMode yes\n"
                  "  StrictHostKeyChecking yes\n",
                  perms::owner_read | perms::owner_write);
  write_user_file("bin/nvidia-smi",
                  "#!/bin/sh\necho 'GPU 0: Stand-in GPU (UUID: GPU-0)'\n"
                  "echo 'GPU 1: Stand-in GPU (UUID: GPU-1)'\n",
                  perms::owner_all | perms::group_read | perms::others_read);
  write_user_file(".cshrc", "setenv PATH ${HOME}/bin:${PATH}\n",
                  perms::owner_read | perms::owner_write);

  std::string work = example.copy_into(dir);
  std::vector<std::string> commands = example.commands();
  ASSERT_EQ(commands, (std::vector<std::string>{
                          "runner check",
                          "runner push ring.c",
                          "runner broadcast --queue-file setup.yaml",
                          "runner queue",
                          "runner results",
                          "runner queue --queue-file crash.yaml",
                      }));
  std::vector<ProcessResult> ran;
  std::vector<std::chrono::steady_clock::duration> took;
  for (const std::string& command : commands) {
    auto began = std::chrono::steady_clock::now();
    ran.push_back(example.run(command, work, env, 90s));
    took.push_back(std::chrono::steady_clock::now() - began);
    int expected = command == commands.back() ? 1 : 0;
    ASSERT_EQ(ran.back().status, expected) << command << "\n" << ran.back().out << ran.back().err;
  }

  // check: both nodes reached and each lists its two GPUs.
  for (const char* node : {"node0: ok", "node1: ok"}) {
    EXPECT_NE(ran[0].out.find(node), std::string::npos) << ran[0].out << ran[0].err;
  }
  EXPECT_EQ(testing::count(ran[0].out, "2 GPUs: 0 Stand-in GPU, 1 Stand-in GPU"), 2) << ran[0].out;
  // setup: every slot saw mpicc, and the nodes built ./ring in the shared home.
  for (const char* line : {"node0 gpu 0: /usr/bin/mpicc, /usr/bin/mpirun, mpirun (Open MPI)",
                           "node1 gpu 1: /usr/bin/mpicc, /usr/bin/mpirun, mpirun (Open MPI)"}) {
    EXPECT_NE(ran[2].out.find(line), std::string::npos) << ran[2].out;
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(user->home() + "/ring"));

  // queue: each job's 4 MPI ranks ran, 2 on each node.
  for (const char* rank : {"rank 0 of 4 on node0", "rank 1 of 4 on node0", "rank 2 of 4 on node1",
                           "rank 3 of 4 on node1"}) {
    EXPECT_EQ(testing::count(ran[3].out, rank), 3) << rank << " in:\n" << ran[3].out;
  }
  // results: a row per message size, run on both nodes, with its time per hop.
  EXPECT_EQ(ran[4].out.substr(0, ran[4].out.find('\n')),
            "id,bytes,host,slot,outcome,exit,duration_s,attempts,us_per_hop");
  std::set<std::string> sizes;
  for (auto& row : testing::csv_rows(ran[4].out)) {
    EXPECT_EQ(row.count("<malformed>"), 0u) << row["<malformed>"];
    sizes.insert(row["bytes"]);
    EXPECT_EQ(row["host"], "node0") << ran[4].out;
    EXPECT_EQ(row["slot"], "node0 gpu=0,1") << ran[4].out;
    EXPECT_EQ(row["outcome"], "succeeded") << ran[4].out;
    EXPECT_GT(std::stod(row["us_per_hop"]), 0) << ran[4].out;
  }
  EXPECT_EQ(sizes, (std::set<std::string>{"8", "4096", "65536"})) << ran[4].out;

  // crash: rank 3 failed, mpirun stopped the others at once, nothing left.
  EXPECT_NE(ran[5].out.find("rank 3 on node1: failing on purpose"), std::string::npos)
      << ran[5].out;
  EXPECT_LT(took[5], 30s) << "the ranks waiting for rank 3 were not stopped";
  EXPECT_TRUE(testing::live_processes_starting("./ring").empty());
}

}  // namespace
}  // namespace runner
