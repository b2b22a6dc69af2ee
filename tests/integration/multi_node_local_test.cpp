// Jobs that span hosts (`nodes: N`), run by the real binary on two local
// hosts (`localhost` and `127.0.0.1` are two hosts of local processes):
// what each rank sees, its own log, fail together, and --resume. Real
// torchrun and mpirun across network namespaces are in multi_node_test.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::count;
using testing::ProcessResult;
using testing::TempDir;

// A sleep whose command line no other test's process has.
std::string marker_sleep() { return "sleep " + std::to_string(300 + getpid() % 600) + ".75"; }

struct LocalMultiNode : ::testing::Test {
  TempDir dir;

  void SetUp() override {
    dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n- hostname: 127.0.0.1\n  slots: 2\n");
  }
  testing::ProcessSpec spec(std::vector<std::string> args) {
    return testing::runner_spec(std::move(args), dir.path());
  }
  std::string journal() { return dir.read("queue.runner/journal.jsonl"); }
};

TEST_F(LocalMultiNode, EachRankSeesItsVariablesEnvironmentAndHostfileAndHasItsOwnLog) {
  dir.write(
      "queue.yaml",
      "- command: >-\n"
      "    echo rank <<rank>> of <<nnodes>> on <<hostname>> master <<master_addr>>:<<master_port>>"
      " env $RUNNER_RANK/$RUNNER_NNODES/$RUNNER_MASTER_ADDR:$RUNNER_MASTER_PORT;"
      " cat <<hostfile>>; test \"$RUNNER_HOSTFILE\" = <<hostfile>> && echo same file;"
      " echo <<hostfile>> > hostfile-of-<<rank>>\n"
      "  nodes: 2\n"
      "  slots: 2\n");
  ProcessResult r = testing::run_process(spec({"queue"}));
  ASSERT_EQ(r.status, 0) << r.err;
  // Once the job ended, its hostfile is gone from the nodes.
  std::string hostfile = dir.read("hostfile-of-0");
  ASSERT_FALSE(hostfile.empty());
  hostfile.pop_back();
  EXPECT_EQ(dir.read("hostfile-of-1"), hostfile + "\n");
  EXPECT_FALSE(std::filesystem::exists(hostfile)) << hostfile;
  std::string rank0 = dir.read("queue.runner/logs/1.0.log");
  std::string rank1 = dir.read("queue.runner/logs/1.1.log");
  // The master port is the first free one from 29500: one that a test before
  // this one left in TIME_WAIT is passed over.
  std::size_t port_at = rank0.find("127.0.0.1:");
  ASSERT_NE(port_at, std::string::npos) << rank0;
  std::string port = rank0.substr(port_at + 10, 5);
  EXPECT_GE(std::stoi(port), 29500) << rank0;
  EXPECT_EQ(rank0, "rank 0 of 2 on localhost master 127.0.0.1:" + port + " env 0/2/127.0.0.1:" +
                       port + "\n127.0.0.1 slots=2\n127.0.0.1 slots=2\nsame file\n");
  EXPECT_EQ(rank1, "rank 1 of 2 on 127.0.0.1 master 127.0.0.1:" + port + " env 1/2/127.0.0.1:" +
                       port + "\n127.0.0.1 slots=2\n127.0.0.1 slots=2\nsame file\n");
  // The console names each rank and its host.
  EXPECT_NE(r.out.find("[localhost #0,1 rank 0] rank 0 of 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[127.0.0.1 #0,1 rank 1] rank 1 of 2"), std::string::npos) << r.out;
  // One job in the journal, with both ranks.
  std::string records = journal();
  EXPECT_EQ(count(records, "\"event\":\"job_start\""), 1);
  EXPECT_EQ(count(records, "\"event\":\"job_end\""), 1);
  EXPECT_NE(records.find("\"nodes\":2,\"tasks\":[{\"rank\":0,\"host\":\"localhost\""),
            std::string::npos)
      << records;
  EXPECT_EQ(count(records, "\"event\":\"job_pgid\""), 2);
  EXPECT_NE(records.find("\"rank\":1}"), std::string::npos) << records;
}

TEST_F(LocalMultiNode, ARankThatFailsStopsTheOtherAndTheRunSaysWhichRank) {
  std::string stuck = marker_sleep();
  dir.write("queue.yaml", "- command: if [ <<rank>> = 1 ]; then sleep 0.3; exit 3; fi; " + stuck +
                              "\n  nodes: 2\n");
  auto started = std::chrono::steady_clock::now();
  ProcessResult r = testing::run_process(spec({"queue"}));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 60s) << "rank 0 was not stopped";
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  EXPECT_NE(r.err.find("#1 rank 1 [127.0.0.1 #0 rank 1] exit 3; stopping its other ranks"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("failed: rank 1: exit 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("log: queue.runner/logs/1.1.log"), std::string::npos) << r.err;
  EXPECT_NE(journal().find("\"exit\":3,"), std::string::npos);
  EXPECT_NE(journal().find("\"failed_rank\":1}"), std::string::npos) << journal();
}

TEST_F(LocalMultiNode, InterruptingTwiceStopsEveryRank) {
  std::string stuck = marker_sleep();
  dir.write("queue.yaml", "- command: " + stuck + "\n  nodes: 2\n");
  testing::Process run(spec({"queue"}));
  testing::wait_until([&] { return testing::live_processes_running(stuck) == 2; }, 20s);
  ASSERT_EQ(testing::live_processes_running(stuck), 2) << run.peek_err();
  run.signal(SIGINT);
  ASSERT_TRUE(run.wait_for_output("interrupt again", 5s)) << run.peek_err();
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 130) << r.err;
  testing::wait_until([&] { return testing::live_processes_running(stuck) == 0; }, 2s);
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
}

TEST_F(LocalMultiNode, ResumeKillsWhatEveryRankOfADeadRunLeft) {
  std::string stuck = marker_sleep();
  std::string flag = dir.file("tried");
  dir.write("queue.yaml", "- command: if [ -e " + flag + ".<<rank>> ]; then echo again <<rank>>; "
                              "else touch " + flag + ".<<rank>>; " + stuck + "; fi\n  nodes: 2\n");
  {
    testing::Process run(spec({"queue"}));
    testing::wait_until([&] { return testing::live_processes_running(stuck) == 2; }, 20s);
    ASSERT_EQ(testing::live_processes_running(stuck), 2) << run.peek_err();
    run.signal(SIGKILL);
    run.wait();
  }
  ASSERT_EQ(testing::live_processes_running(stuck), 2) << "the ranks outlive their runner";
  ProcessResult resumed = testing::run_process(spec({"queue", "--resume"}));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  EXPECT_NE(resumed.err.find("localhost: killed 1 leftover process group"), std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("127.0.0.1: killed 1 leftover process group"), std::string::npos)
      << resumed.err;
  std::string log = dir.read("queue.runner/logs/1.1.log");
  EXPECT_NE(log.find("--- runner: attempt 2 of #1, on 127.0.0.1 #0 rank 1 ---\nagain 1\n"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace runner
