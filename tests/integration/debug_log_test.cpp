// The debug log: -v/-vv and RUNNER_LOG say each step with a host on stderr,
// and every run keeps its steps in debug.log in its state directory. The
// real binary against a real sshd on 127.0.0.1.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct DebugLog : ::testing::Test {
  TempDir dir;
  testing::LoopbackFleet fleet{dir};

  void SetUp() override {
    if (fleet.start(1, {})) {
      fleet.write_hosts(1);
      return;
    }
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }

  std::string new_key(const std::string& name) {
    EXPECT_EQ(testing::run_process({{"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                                     dir.file(name)}})
                  .status,
              0);
    return dir.file(name);
  }

  // runner with the fleet's known_hosts, the keys given and no agent.
  ProcessResult run(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.end(), {"--known-hosts", fleet.known_hosts_file(), "--no-agent",
                             "--ssh-config", dir.write("ssh_config", "")});
    testing::ProcessSpec spec = testing::runner_spec(std::move(args), dir.path());
    spec.env.insert(env.begin(), env.end());
    return testing::run_process(spec);
  }
};

TEST_F(DebugLog, VeryVerboseSaysEachAuthenticationMethodTriedAndWhyItFailed) {
  dir.write("queue.yaml", "- 'true'\n");
  std::string first = new_key("stranger");
  std::string second = new_key("other_stranger");
  ProcessResult r = run({"-vv", "queue", "--identity", first, "--identity", second});
  EXPECT_EQ(r.status, 1) << r.err;
  for (const std::string& said :
       {std::string("connecting as"), std::string("TCP connect to"),
        std::string("SSH handshake done"), std::string("host key accepted"),
        std::string("the server offers publickey"), "trying key " + first,
        "key " + first + ": the server did not accept it", "trying key " + second,
        "key " + second + ": the server did not accept it"}) {
    EXPECT_NE(r.err.find(said), std::string::npos) << "missing: " << said << "\n" << r.err;
  }
}

TEST_F(DebugLog, WithoutVerboseTheConsoleIsAsItWasAndTheRunKeepsItsStepsInItsStateDirectory) {
  dir.write("queue.yaml", "- 'true'\n");
  ProcessResult r = run({"queue", "--identity", fleet.key()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("connecting as"), std::string::npos) << r.err;
  std::string log = dir.read("queue.runner/debug.log");
  EXPECT_NE(log.find("a run starts"), std::string::npos) << log;
  EXPECT_NE(log.find("connecting as"), std::string::npos) << log;
  EXPECT_NE(log.find("authenticated as"), std::string::npos) << log;
  EXPECT_EQ(log.find("TCP connect to"), std::string::npos) << "details only with -vv\n" << log;
}

TEST_F(DebugLog, RunnerLogInfoShowsTheStepsOnStderr) {
  dir.write("queue.yaml", "- 'true'\n");
  ProcessResult r = run({"queue", "--identity", fleet.key()}, {{"RUNNER_LOG", "info"}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("authenticated as"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("TCP connect to"), std::string::npos) << r.err;
}

TEST_F(DebugLog, VeryVerboseSaysWhyTheQueuesHeadWaitsAndForWhichSlots) {
  dir.write("queue.yaml", "- sleep 0.3\n- sleep 0.3\n");
  ProcessResult r = run({"-vv", "queue", "--identity", fleet.key()});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("the queue's head waits: the next job (queue line 1) needs 1 slot of one "
                       "host, and too few are free (" +
                       fleet.name(0) + ": 0 of 1 free, 1 held by a job)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("edit the queue"), std::string::npos)
      << "the job fits once a slot is free: nothing is to be edited\n"
      << r.err;
}

}  // namespace
}  // namespace runner
