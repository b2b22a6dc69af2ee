// Patterns of queue.yaml over what jobs print, with the real binary on local
// slots: lines far longer than a terminal's (a dumped array, a progress bar
// without '\r') matched by `metrics:` and `ready_log:`, a pattern whose
// match runs into its limits, and one the engine refuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct LongLines : ::testing::Test {
  TempDir dir;
  // Unique, so that a leftover of this test is found by its command line.
  std::string marker = "sleep " + std::to_string(600 + getpid() % 500) + ".25";

  void SetUp() override { dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n"); }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }

  // `runner results` once `runner queue` ran `queue` (and succeeded).
  ProcessResult results_after(const std::string& queue) {
    dir.write("queue.yaml", queue);
    ProcessResult run = runner({"queue"});
    EXPECT_EQ(run.status, 0) << run.err;
    return runner({"results"});
  }
};

TEST_F(LongLines, AMetricOverALineOf200000CharactersIsReadByResultsAndReport) {
  // The value, then a line of 200,000 characters that the pattern's `\S+`
  // runs over from each of its characters.
  ProcessResult results = results_after(
      "- command: \"echo 12.5 items/s; head -c 200000 /dev/zero | tr '\\\\0' x; echo\"\n"
      "  metrics: {speed: '(\\S+) items/s'}\n");
  EXPECT_EQ(testing::count(dir.read("queue.runner/logs/1.log"), std::string(200000, 'x')), 1);
  ASSERT_EQ(results.status, 0) << results.err;
  EXPECT_NE(results.out.find(",speed\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find(",12.5\n"), std::string::npos) << results.out;

  ProcessResult report = runner({"report", "-o", "-"});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("12.5"), std::string::npos);
}

TEST_F(LongLines, AServiceThatPrintsALineOf60000CharactersBecomesReadyAndTheClientsRun) {
  dir.write("queue.yaml",
            "- command: \"head -c 60000 /dev/zero | tr '\\\\0' x; echo; echo 127.0.0.1:9 is "
            "ready; exec " +
                marker +
                "\"\n"
                "  service: db\n"
                "  ready_log: '(?<addr>\\S+) is ready'\n"
                "- echo client of <<db.addr>>\n"
                "- echo another client of <<db.addr>>\n");
  ProcessResult run = runner({"queue"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("] client of 127.0.0.1:9\n"), std::string::npos) << run.out.size();
  EXPECT_NE(run.out.find("] another client of 127.0.0.1:9\n"), std::string::npos);
  EXPECT_EQ(testing::live_processes_running(marker), 0);
  EXPECT_EQ(testing::count(dir.read("queue.runner/journal.jsonl"), "\"event\":\"run_end\""), 1);
}

TEST_F(LongLines, AMatchThatRunsIntoItsLimitIsSaidAndTheRestGoesOn) {
  // Nested repetitions over 40 characters not followed by the `y`: the
  // backtracking tries every way of cutting them before it could fail.
  ProcessResult results = results_after(
      "- command: echo speed 3; echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-y\n"
      "  metrics: {slow: '((x+x+)+y)', speed: 'speed (\\d+)'}\n");
  ASSERT_EQ(results.status, 0) << results.err;
  // `slow` has no value: no column; `speed` has its own.
  EXPECT_NE(results.out.find(",attempts,speed\n"), std::string::npos) << results.out;
  EXPECT_NE(results.out.find(",1,3\n"), std::string::npos) << results.out;
  EXPECT_NE(results.err.find("runner: warning: #1: its metric `slow`: matching `((x+x+)+y)` "
                             "passed over a line of its log (match limit exceeded); it has no "
                             "value\n"),
            std::string::npos)
      << results.err;
}

TEST_F(LongLines, APatternTheEngineRefusesIsAnErrorAtItsLineBeforeAnythingRuns) {
  dir.write("queue.yaml",
            "- command: touch ran\n"
            "  metrics:\n"
            "    speed: '(?<x>a)(?<x>b)'\n"
            "- command: touch ran\n"
            "  service: db\n"
            "  ready_log: '(\\d+) up(?'\n");
  ProcessResult run = runner({"queue"});
  EXPECT_EQ(run.status, 2) << run.err;
  EXPECT_NE(run.err.find("queue.yaml:3"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("two named subpatterns have the same name"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
}

}  // namespace
}  // namespace runner
