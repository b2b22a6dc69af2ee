// A campaign whose journal grew past its size limit and was sealed in
// segments: status, log, report and --resume read every segment, and job
// ids go on across runs.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::ProcessResult;
using testing::TempDir;

struct SealedJournal : ::testing::Test {
  TempDir dir;
  void SetUp() override { dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0, 1]\n"); }
  testing::ProcessSpec spec(std::vector<std::string> args) {
    testing::ProcessSpec spec = testing::runner_spec(std::move(args), dir.path());
    spec.env["RUNNER_JOURNAL_SEGMENT_BYTES"] = "3000";
    return spec;
  }
  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(spec(std::move(args)));
  }
  std::size_t segments() const {
    std::size_t count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.file("queue.runner/journal")))
      count += entry.path().extension() == ".jsonl";
    return count;
  }
};

TEST_F(SealedJournal, StatusLogAndReportReadEverySegment) {
  std::string queue = "- command:\n";
  for (int i = 1; i <= 60; ++i)
    queue += "  - echo job" + std::to_string(i) + (i == 8 ? " && false" : "") + "\n";
  dir.write("queue.yaml", queue);
  ASSERT_EQ(runner({"queue"}).status, 1);
  EXPECT_GE(segments(), 5u);
  // The run brought the checkpoint up to date as it sealed the journal.
  EXPECT_TRUE(std::filesystem::exists(dir.file("queue.runner/journal.checkpoint")));

  ProcessResult status = runner({"status", "--json"});
  ASSERT_EQ(status.status, 0) << status.err;
  nlohmann::json json = nlohmann::json::parse(status.out);
  EXPECT_EQ(json["jobs"]["done"], 60);
  EXPECT_EQ(json["jobs"]["succeeded"], 59);
  ASSERT_EQ(json["failed"].size(), 1u);
  EXPECT_EQ(json["failed"][0]["id"], 8);
  EXPECT_EQ(json["slots"][0]["jobs"].get<int>() + json["slots"][1]["jobs"].get<int>(), 60);

  for (int job : {1, 30, 60}) {
    ProcessResult log = runner({"log", std::to_string(job)});
    EXPECT_EQ(log.status, 0) << log.err;
    EXPECT_EQ(log.out, "job" + std::to_string(job) + "\n");
  }

  ProcessResult report = runner({"report", "-o", "page.html"});
  ASSERT_EQ(report.status, 0) << report.err;
  std::string page = dir.read("page.html");
  for (const char* command : {"echo job1", "echo job33", "echo job60"})
    EXPECT_NE(page.find(command), std::string::npos) << command;

  dir.write("queue.yaml", "- echo after\n");
  ASSERT_EQ(runner({"queue"}).status, 0);
  ProcessResult next = runner({"log", "61"});
  EXPECT_EQ(next.out, "after\n") << next.err;
}

TEST_F(SealedJournal, ResumeFindsTheJobsADeadRunLeftInAnEarlierSegment) {
  std::string stuck = "sleep " + std::to_string(400 + getpid() % 500) + ".625";
  std::string queue = "- if [ -e tried ]; then echo rerun; else touch tried; " + stuck + "; fi\n";
  for (int i = 1; i <= 40; ++i) queue += "- echo quick" + std::to_string(i) + "\n";
  dir.write("queue.yaml", queue);
  {
    testing::Process run(spec({"queue"}));
    auto all_quick_done = [&] {
      ProcessResult status = runner({"status", "--json"});
      nlohmann::json json = nlohmann::json::parse(status.out, nullptr, false);
      return json.is_object() && json["jobs"]["done"] == 40;
    };
    testing::wait_until(all_quick_done, 20s);
    ASSERT_EQ(testing::live_processes_running(stuck), 1) << run.peek_err();
    run.signal(SIGKILL);
    run.wait();
  }
  ASSERT_GE(segments(), 4u);
  ProcessResult refused = runner({"queue"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("--resume"), std::string::npos) << refused.err;
  ProcessResult resumed = runner({"queue", "--resume"});
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(testing::live_processes_running(stuck), 0);
  ProcessResult log = runner({"log", "1"});
  EXPECT_NE(log.out.find("rerun"), std::string::npos) << log.out;
}

TEST_F(SealedJournal, ARunBringsTheCheckpointUpToDateWhileItRuns) {
  std::string queue = "- command: true <<i>>\n  i: [";
  for (int i = 1; i <= 2500; ++i) queue += (i > 1 ? ", " : "") + std::to_string(i);
  queue += "]\n- while [ ! -e go ]; do sleep 0.02; done\n";
  dir.write("queue.yaml", queue);
  testing::ProcessSpec unsealed = testing::runner_spec({"queue"}, dir.path());
  // 2,500 jobs take a minute on a machine busy with builds: the bounds are
  // for a run that hangs, not for its speed.
  unsealed.timeout = 4min;
  testing::Process run(unsealed);
  std::string checkpoint = dir.file("queue.runner/journal.checkpoint");
  testing::wait_until(
      [&] {
        run.peek_out();  // its output must not fill the pipe
        return std::filesystem::exists(checkpoint);
      },
      3min);
  // Nothing read the journal but the run itself, which has not ended.
  EXPECT_TRUE(std::filesystem::exists(checkpoint)) << run.peek_err();
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.runner/journal")));
  dir.write("go", "");
  EXPECT_EQ(run.wait().status, 0);
  ProcessResult status = runner({"status", "--json"});
  nlohmann::json json = nlohmann::json::parse(status.out);
  EXPECT_EQ(json["jobs"]["succeeded"], 2501);
}

}  // namespace
}  // namespace runner
