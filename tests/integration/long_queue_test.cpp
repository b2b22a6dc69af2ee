// A queue long enough that takes remove jobs ahead of need, for real: every
// job runs exactly once and consumed.yaml holds them all, and a runner
// killed with SIGKILL while jobs taken ahead wait is resumed with none of
// them lost or run twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <sstream>
#include <string>

#include "runner/queue/take_ahead.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::ProcessResult;
using testing::TempDir;

constexpr int k_jobs = 400;

struct LongQueue : ::testing::Test {
  TempDir dir;

  // Job i appends "job<i>" to ran.txt; each entry is padded by a comment
  // so that the queue is past the size from which jobs are taken ahead.
  // Entry `stuck_at` first runs `stuck` (a command line of its own) until
  // the file `go` is there.
  std::string queue(const std::string& stuck = "", int stuck_at = -1) {
    std::string text;
    for (int i = 0; i < k_jobs; ++i) {
      std::string before = i == stuck_at ? "test -e " + dir.file("go") + " || " + stuck + "; " : "";
      text += "- " + before + "echo job" + std::to_string(i) + " >> " + dir.file("ran.txt") +
              "  # " + std::string(700, 'x') + "\n";
    }
    return text;
  }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }

  // How many times each job appended its name.
  std::map<std::string, int> runs() {
    std::map<std::string, int> counted;
    std::istringstream lines(dir.read("ran.txt"));
    for (std::string line; std::getline(lines, line);) ++counted[line];
    return counted;
  }

  // Every job but `except` (-1: none) appended its name once.
  void expect_each_ran_once(int except = -1) {
    std::map<std::string, int> counted = runs();
    EXPECT_EQ(counted.size(), static_cast<std::size_t>(except < 0 ? k_jobs : k_jobs - 1));
    for (int i = 0; i < k_jobs; ++i) {
      if (i == except) continue;
      EXPECT_EQ(counted["job" + std::to_string(i)], 1) << "job" << i;
    }
  }

  // One slot, and a queue whose job 2 is stuck on `stuck`.
  void stuck_at_2(const std::string& stuck) {
    dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
    dir.write("queue.yaml", queue(stuck, 2));
  }

  // Waits until `run` is stuck, with jobs taken ahead after it waiting; the
  // jobs before it ended, and were recorded as ended, before it started.
  void wait_until_stuck(testing::Process& run, const std::string& stuck) {
    testing::wait_until([&] { return testing::live_processes_running(stuck) == 1; }, 20s);
    ASSERT_EQ(testing::live_processes_running(stuck), 1) << run.peek_err();
    EXPECT_GT(
        testing::count(dir.read("queue.runner/journal.jsonl"), "\"event\":\"job_taken_ahead\""), 0);
  }

  void expect_consumed_in_order() {
    YAML::Node consumed = YAML::LoadFile(dir.file("consumed.yaml"));
    ASSERT_EQ(consumed.size(), static_cast<std::size_t>(k_jobs));
    for (int i = 0; i < k_jobs; ++i)
      EXPECT_NE(consumed[i].as<std::string>().find("echo job" + std::to_string(i) + " >>"),
                std::string::npos)
          << i;
  }
};

TEST_F(LongQueue, DrainsWithEveryJobRunOnceAndConsumedComplete) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  std::string text = queue();
  ASSERT_GE(text.size(), k_take_ahead_threshold);
  dir.write("queue.yaml", text);
  ProcessResult r = runner({"queue", "--print-period", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_each_ran_once();
  expect_consumed_in_order();
  EXPECT_EQ(dir.read("queue.yaml"), "[]\n");
  EXPECT_GT(testing::count(dir.read("queue.runner/journal.jsonl"), "\"event\":\"job_taken_ahead\""),
            0);
}

TEST_F(LongQueue, AKilledRunnerIsResumedWithEveryJobRunOnce) {
  std::string stuck = "sleep " + std::to_string(300 + getpid() % 600) + ".5";
  stuck_at_2(stuck);
  {
    testing::Process run(testing::runner_spec({"queue"}, dir.path()));
    wait_until_stuck(run, stuck);
    run.signal(SIGKILL);
    run.wait();
  }
  ProcessResult refused = runner({"queue"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("taken ahead, never started"), std::string::npos) << refused.err;

  dir.write("go", "");
  ProcessResult resumed = runner({"queue", "--resume", "--print-period", "0"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  expect_each_ran_once();
  expect_consumed_in_order();
}

TEST_F(LongQueue, AnInterruptedRunSaysHowManyJobsTakenAheadWaitForResume) {
  std::string stuck = "sleep " + std::to_string(300 + getpid() % 600) + ".25";
  stuck_at_2(stuck);
  testing::Process run(testing::runner_spec({"queue"}, dir.path()));
  wait_until_stuck(run, stuck);
  run.signal(SIGINT);
  testing::wait_until([&] { return run.peek_err().find("interrupt again") != std::string::npos; },
                      10s);
  run.signal(SIGINT);
  ProcessResult interrupted = run.wait();
  EXPECT_EQ(interrupted.status, 130);
  EXPECT_NE((interrupted.out + interrupted.err)
                .find("taken out of the queue file ahead of need did not start; the "
                      "journal keeps them for `runner queue --resume`"),
            std::string::npos)
      << interrupted.err;

  dir.write("go", "");
  ProcessResult resumed = runner({"queue", "--resume", "--print-period", "0"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  // The stuck job was cancelled by the second interrupt: it does not run again.
  expect_each_ran_once(2);
  expect_consumed_in_order();
}

}  // namespace
}  // namespace runner
