// The real binary on local slots: what a user sees and what is left on disk.
#include <gtest/gtest.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::count;

using testing::ProcessResult;
using testing::TempDir;

int lines_with_event(const std::string& journal, const std::string& event) {
  return count(journal, "\"event\":\"" + event + "\"");
}

struct LocalRun : ::testing::Test {
  TempDir dir;

  void SetUp() override { dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0, 1]\n"); }

  ProcessResult runner(std::vector<std::string> args, const std::string& input = "") {
    auto spec = testing::runner_spec(std::move(args), dir.path());
    spec.input = input;
    return testing::run_process(spec);
  }
};

TEST_F(LocalRun, DrainsTheQueueWithPrefixedOutputLogsAndJournal) {
  dir.write("queue.yaml",
            "# my campaign\n"
            "- echo first on <<gpu>>\n"
            "- command: echo <<model>> bs=<<bs>> gpu=<<gpu>>\n"
            "  model: [a, b]\n"
            "  bs: [1, 2]\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(testing::job_lines(r.out), "\n"), 5);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\[localhost gpu=[01]\] first on [01]\n)")));
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\[localhost gpu=([01])\] b bs=2 gpu=\1\n)")));
  // The queue is an empty list, its comment kept.
  EXPECT_EQ(dir.read("queue.yaml"), "# my campaign\n[]\n");
  // consumed.yaml holds the five jobs in Pegasus' form: one-value lists.
  YAML::Node consumed = YAML::LoadFile(dir.file("consumed.yaml"));
  ASSERT_EQ(consumed.size(), 5u);
  EXPECT_EQ(consumed[4]["command"][0].as<std::string>(), "echo <<model>> bs=<<bs>> gpu=<<gpu>>");
  EXPECT_EQ(consumed[4]["model"][0].as<std::string>(), "b");
  EXPECT_EQ(consumed[4]["bs"][0].as<std::string>(), "2");
  // The journal and one log per job.
  std::string journal = dir.read("queue.runner/journal.jsonl");
  EXPECT_EQ(lines_with_event(journal, "job_start"), 5);
  EXPECT_EQ(lines_with_event(journal, "job_end"), 5);
  EXPECT_EQ(lines_with_event(journal, "run_end"), 1);
  int logs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("queue.runner/logs"))) {
    ++logs;
    std::ifstream in(entry.path());
    std::string content((std::istreambuf_iterator<char>(in)), {});
    EXPECT_FALSE(content.empty()) << entry.path();
  }
  EXPECT_EQ(logs, 5);
}

TEST_F(LocalRun, FailedJobGivesExitOneAndASummaryNamingIt) {
  dir.write("queue.yaml", "- echo fine\n- echo broken >&2; exit 3\n- echo also fine\n");
  ProcessResult r = runner({"q"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(testing::job_lines(r.out).find("also fine"), std::string::npos) << "queue mode goes on after a failure";
  EXPECT_NE(r.err.find("exit 3"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("queue.runner/logs/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("echo broken"), std::string::npos) << r.err;
}

TEST_F(LocalRun, CommandsRunExactlyAsWritten) {
  dir.write("queue.yaml",
            "- |-\n"
            "  printf '%s|' \"it's\" '$HOME' \"a\\\\b\"\n"
            "  echo; echo 'second line'\n");
  ProcessResult r = runner({"queue", "--print-period", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] it's|$HOME|a\\b|\n"), std::string::npos) << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("] second line\n"), std::string::npos) << r.out;
}

TEST_F(LocalRun, PrintPeriodZeroPrintsNoJobLinesButLogsEverything) {
  dir.write("queue.yaml", "- seq 1 5\n");
  ProcessResult r = runner({"queue", "-p", "0"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Only the job's start and end.
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex(R"(\[localhost gpu=0\] === #1 run 'seq 1 5' ===\n)"
                        R"(\[localhost gpu=0\] === #1 done \(exit 0\) after \S+ ===\n)")))
      << r.out;
  EXPECT_EQ(dir.read("queue.runner/logs/1.log"), "1\n2\n3\n4\n5\n");
}

TEST_F(LocalRun, AMultiSlotJobGetsAnAlignedPairOfSlots) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 4\n");
  // The first job holds slot 0 while the pair is placed.
  dir.write("queue.yaml",
            "- sleep 0.5\n- command: echo pair on <<slots>>; sleep 2\n  slots: 2\n"
            "- command: echo buddy on <<slots>>\n  slots: 2\n  allocation_policy: buddy\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string out = testing::job_lines(r.out);
  EXPECT_NE(out.find("] pair on 2,3\n"), std::string::npos) << r.out;
  // Slot 1 alone is no aligned pair: the buddy job waits for 0,1.
  EXPECT_NE(out.find("] buddy on 0,1\n"), std::string::npos) << r.out;
}

TEST_F(LocalRun, EachJobsStartAndEndAreShownThoughItPrintsNothing) {
  dir.write("hosts.yaml", "- localhost\n");
  dir.write("queue.yaml", "- 'true'\n- exit 3\n- \"echo one\\necho two\"\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(std::regex_match(
      r.out, std::regex(R"(\[localhost\] === #1 run 'true' ===\n)"
                        R"(\[localhost\] === #1 done \(exit 0\) after \S+ ===\n)"
                        R"(\[localhost\] === #2 run 'exit 3' ===\n)"
                        R"(\[localhost\] === #2 done \(exit 3\) after \S+ ===\n)"
                        R"(\[localhost\] === #3 run 'echo one echo two' ===\n)"
                        R"(\[localhost\] one\n\[localhost\] two\n)"
                        R"(\[localhost\] === #3 done \(exit 0\) after \S+ ===\n)")))
      << r.out;
}

TEST_F(LocalRun, PrintPeriodPrintsLinesNTwoNThreeN) {
  dir.write("hosts.yaml", "- localhost\n");
  dir.write("queue.yaml", "- seq 1 7; seq 11 13 >&2\n");
  ProcessResult r = runner({"queue", "-p", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::job_lines(r.out), "[localhost] 3\n[localhost] 6\n[localhost] 13\n");
}

TEST_F(LocalRun, BroadcastRunsEveryStepOnEverySlotInLockstep) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 3\n");
  // Step 2 checks that all three step-1 markers exist before any step-2 job
  // ran: a step-2 job that started early would fail.
  dir.write("queue.yaml",
            "- sleep 0.<<slots>>; touch one-<<slots>>\n"
            "- test $(ls one-* | wc -l) -eq 3 && touch two-<<slots>>\n");
  ProcessResult r = runner({"broadcast"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"one-0", "one-1", "one-2", "two-0", "two-1", "two-2"})
    EXPECT_TRUE(std::filesystem::exists(dir.file(f))) << f;
}

TEST_F(LocalRun, BroadcastStopsAfterAFailedStepUnlessIgnoringErrors) {
  dir.write("queue.yaml", "- test <<gpu>> -eq 0\n- touch after-<<gpu>>\n");
  ProcessResult r = runner({"b"});
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.file("after-0")));
  EXPECT_NE(dir.read("queue.yaml").find("touch after"), std::string::npos)
      << "the step that did not run stays in the queue";

  ProcessResult again = runner({"b", "--ignore-errors"});
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_TRUE(std::filesystem::exists(dir.file("after-0")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("after-1")));
}

TEST_F(LocalRun, MultiSlotJobsGetJoinedHostParameters) {
  dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [4, 5, 6, 7]\n");
  dir.write("queue.yaml", "- command: echo gpus=<<gpu>> slots=<<slots>>\n  slots: 4\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("[localhost gpu=4,5,6,7] gpus=4,5,6,7 slots=0,1,2,3\n"), std::string::npos)
      << r.out;
}

TEST_F(LocalRun, ASlotsHostGivesAMultiSlotJobEachHostParameterOnce) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: [2]\n  node_type: cloud\n");
  dir.write("queue.yaml", "- command: echo --node-type <<node_type>> <<slots>>\n  slots: 2\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::job_lines(r.out), "[localhost node_type=cloud #0,1] --node-type cloud 0,1\n");
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST_F(LocalRun, PegasusFilesAndFlagsWorkUnchanged) {
  dir.write("pegasus-hosts.yaml", "- hostname:\n    - localhost\n  container:\n    - c0\n");
  dir.write("pegasus-queue.yaml",
            "- command:\n"
            "    - echo {{ container }} {{ replace model \"/\" \"--\" }}\n"
            "  model:\n"
            "    - meta/llama\n");
  ProcessResult r = runner(
      {"--hosts-file", "pegasus-hosts.yaml", "q", "--queue-file", "pegasus-queue.yaml", "-p", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("c0 meta--llama\n"), std::string::npos) << r.out;
}

TEST_F(LocalRun, LoopbackNamesWrittenAloneRunLocally) {
  dir.write("hosts.yaml", "- 127.0.0.1\n- \"::1\"\n- Localhost\n");
  dir.write("queue.yaml", "- command: echo on <<hostname>>\n  when: [1, 2, 3]\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (std::string host : {"127.0.0.1", "::1", "Localhost"})
    EXPECT_NE(testing::job_lines(r.out).find("[" + host + "] on " + host + "\n"), std::string::npos) << r.out;
}

TEST_F(LocalRun, HostParametersAndHostnameWinOverTheJobs) {
  dir.write("hosts.yaml", "- hostname: localhost\n  gpu: 0\n");
  dir.write("queue.yaml",
            "- command: echo gpu=<<gpu>> host=<<hostname>>\n  gpu: 7\n  hostname: elsewhere\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(testing::job_lines(r.out), "[localhost gpu=0] gpu=0 host=localhost\n");
}

TEST_F(LocalRun, AHostEntryRepeatedIsNamedWithBothLinesAndStillRuns) {
  dir.write("hosts.yaml",
            "- hostname: localhost\n  gpu: [0, 1]\n# the same GPU again\n- hostname: localhost\n"
            "  gpu: 0\n");
  dir.write("queue.yaml", "- echo a\n- echo b\n- echo c\n");
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: hosts.yaml:4: localhost gpu=0 is also at line 1: two jobs will "
                       "run on it at once"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(count(testing::job_lines(r.out), "\n"), 3) << r.out;
}

// --- bad input: exit 2, nothing runs, no byte of the user's files lost ---

struct BadInput : LocalRun {
  void expect_refused(const std::string& queue, const std::string& message_pattern) {
    dir.write("queue.yaml", queue);
    ProcessResult r = runner({"queue"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex(message_pattern))) << r.err;
    EXPECT_EQ(dir.read("queue.yaml"), queue) << "the queue file was changed";
    EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << "a job ran";
    EXPECT_FALSE(std::filesystem::exists(dir.file("consumed.yaml")));
  }
};

TEST_F(BadInput, MissingHostsFile) {
  std::filesystem::remove(dir.file("hosts.yaml"));
  expect_refused("- touch ran\n", "hosts file not found");
}

TEST_F(BadInput, MissingQueueFile) {
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("queue.yaml"), std::string::npos) << r.err;
}

TEST_F(BadInput, UnparsableHostsFileNamesLineAndColumn) {
  dir.write("hosts.yaml", "- hostname: localhost\n  gpu: [0, 1\n");
  expect_refused("- touch ran\n", R"(hosts\.yaml:\d+:\d+: )");
}

TEST_F(BadInput, UnparsableQueueNamesLineAndColumn) {
  // yaml-cpp notices an unclosed list where the file ends.
  expect_refused("- touch ran\n- command: [unclosed\n", R"(queue\.yaml:3:1: .*not valid YAML)");
  expect_refused("- touch ran\n  bad: indentation\n", R"(queue\.yaml:2:\d+: )");
}

TEST_F(BadInput, EntryWithoutCommand) {
  expect_refused("- touch ran\n- model: [a]\n", R"(queue\.yaml:2:\d+: .*command)");
}

TEST_F(BadInput, HostEntryWithoutHostname) {
  dir.write("hosts.yaml", "- gpu: [0]\n");
  expect_refused("- touch ran\n", "hostname");
}

TEST_F(BadInput, JobNeedingMoreSlotsThanAnyHost) {
  expect_refused("- touch ran\n- command: echo big\n  slots: 3\n", "3 slots");
}

TEST_F(BadInput, UndefinedTemplateVariable) {
  expect_refused("- touch ran\n- echo <<modle>>\n", "modle");
}

TEST_F(BadInput, UnknownFlag) {
  dir.write("queue.yaml", "- touch ran\n");
  ProcessResult r = runner({"queue", "--no-such-flag"});
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
}

// --- a state directory that cannot be used: exit 2, its path and the reason said ---

struct StateDirectory : LocalRun {
  // `runner args` ends with exit status 2 and an error matching `pattern`,
  // having run nothing.
  void expect_ended(const std::vector<std::string>& args, const std::string& pattern) {
    ProcessResult r = runner(args);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("runner: error: " + pattern))) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << "a job ran";
  }
};

TEST_F(StateDirectory, ThatCannotBeCreatedEndsTheRunNamingIt) {
  dir.write("queue.yaml", "- touch ran\n");
  dir.write("queue.runner", "a file where the state directory goes\n");
  expect_ended({"queue"},
               R"(cannot create the state directory \S*queue\.runner/logs: Not a directory\n)");
  EXPECT_EQ(dir.read("queue.yaml"), "- touch ran\n");
}

TEST_F(StateDirectory, AJournalThatCannotBeOpenedEndsTheRunNamingIt) {
  dir.write("queue.yaml", "- touch ran\n");
  std::filesystem::create_directories(dir.file("queue.runner/logs"));
  std::filesystem::create_directory(dir.file("queue.runner/journal.jsonl"));
  expect_ended({"queue"},
               R"(cannot open the journal \S*queue\.runner/journal\.jsonl: Is a directory\n)");
  EXPECT_EQ(dir.read("queue.yaml"), "- touch ran\n");
}

TEST_F(StateDirectory, AJournalThatCannotBeReadEndsStatusAndReportNamingIt) {
  std::filesystem::create_directories(dir.file("queue.runner/logs"));
  std::filesystem::create_directory(dir.file("queue.runner/journal.jsonl"));
  for (const char* command : {"status", "report"})
    expect_ended({command}, R"(cannot read \S*queue\.runner/journal\.jsonl: Is a directory\n)");
}

}  // namespace
}  // namespace runner
