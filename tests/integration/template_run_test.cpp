// The real binary renders Handlebars templates on a local slot: blocks,
// helpers and shell heredocs in one command, escapes, variables inside shell
// arithmetic, and templates refused before anything runs or, appended to a
// live queue, before the job starts.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;

struct TemplateRun : ::testing::Test {
  TempDir dir;

  void SetUp() override { dir.write("hosts.yaml", "- localhost\n"); }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
};

TEST_F(TemplateRun, BlockStringHelperAndHeredocInOneCommand) {
  dir.write("queue.yaml",
            "- command: |\n"
            "    <<#if (eq gpu \"0\")>>echo build on <<gpu>><<else>>echo skip<</if>>\n"
            "    echo {{ to_upper_case (replace model \"/\" \"_\") }}\n"
            "    cat <<EOF >> out.txt\n"
            "    model <<model>>, $(( 1 << 4 >> 2 )) shards\n"
            "    EOF\n"
            "  model: meta/llama\n"
            "  gpu: ['0', '1']\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("build on 0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skip\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("META_LLAMA\n"), std::string::npos) << r.out;
  EXPECT_EQ(dir.read("out.txt"), "model meta/llama, 4 shards\nmodel meta/llama, 4 shards\n");
}

TEST_F(TemplateRun, UnknownHelperIsRefusedBeforeAnythingRuns) {
  const std::string queue =
      "- touch ran\n"
      "- command: echo {{ shout model }}\n"
      "  model: m\n";
  dir.write("queue.yaml", queue);
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("queue.yaml:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`shout`"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\{{ shout model }}"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
  EXPECT_EQ(dir.read("queue.yaml"), queue);
}

// As in Handlebars, `\{{` is `{{` even when no tag follows.
TEST_F(TemplateRun, BackslashBeforeBracesReachesTheShellAsBraces) {
  dir.write("queue.yaml",
            "- command: |\n"
            "    echo format '\\{{.Names}}' gpu \\{{gpu}} is {{gpu}}\n"
            "  gpu: 3\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] format {{.Names}} gpu {{gpu}} is 3\n"),
            std::string::npos)
      << r.out;
}

// Pegasus' job-slots example passes `--policy {{allocation_policy}}`.
TEST_F(TemplateRun, AllocationPolicyRendersAsInPegasus) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  dir.write("queue.yaml",
            "- command: echo policy {{allocation_policy}} on {{slots}}\n"
            "  slots: 2\n"
            "  allocation_policy: buddy\n"
            "- echo default <<allocation_policy>>\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string lines = testing::job_lines(r.out);
  EXPECT_NE(lines.find("] policy buddy on 0,1\n"), std::string::npos) << r.out;
  EXPECT_NE(lines.find("] default first_fit\n"), std::string::npos) << r.out;
}

TEST_F(TemplateRun, AngleVariableRendersInsideShellArithmetic) {
  dir.write("queue.yaml",
            "- command: |\n"
            "    echo batch $((<<bs>> * 10)) shift $((1<<4>>2))\n"
            "    cat <<EOF>>out.txt\n"
            "    bs <<bs>>\n"
            "    EOF\n"
            "  bs: 3\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] batch 30 shift 4\n"), std::string::npos) << r.out;
  EXPECT_EQ(dir.read("out.txt"), "bs 3\n");
}

// `{{#if x}}` 20,000 deep: `echo {{#if x}}...y...{{/if}}...`.
std::string deeply_nested_command() {
  std::string command = "echo ";
  for (int i = 0; i < 20000; ++i) command += "{{#if x}}";
  command += "y";
  for (int i = 0; i < 20000; ++i) command += "{{/if}}";
  return command;
}

TEST_F(TemplateRun, DeepNestingIsRefusedAtItsLineBeforeAnythingRuns) {
  const std::string queue = "- touch ran\n- command: '" + deeply_nested_command() + "'\n  x: 1\n";
  dir.write("queue.yaml", queue);
  ProcessResult r = runner({"queue", "--dry-run"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("queue.yaml:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nested too deeply"), std::string::npos) << r.err;
  EXPECT_EQ(runner({"queue"}).status, 2);
  EXPECT_FALSE(std::filesystem::exists(dir.file("ran")));
  EXPECT_TRUE(dir.read("queue.yaml") == queue) << "queue.yaml changed";
}

// Appended to a live queue, the job is reported at its line and waits, with
// the file as it is, while the running job goes on; a fix lets it run.
TEST_F(TemplateRun, DeepNestingAppendedToALiveQueueWaitsForAFix) {
  dir.write("queue.yaml", "- sleep 1; echo long job done\n");
  Process run(testing::runner_spec({"queue", "--daemon"}, dir.path()));
  ASSERT_TRUE(run.wait_for_output("run 'sleep 1", 10s)) << run.peek_err();
  const std::string appended =
      "- command: '" + deeply_nested_command() + "'\n  x: 1\n- echo behind\n";
  std::string before = dir.read("queue.yaml");
  int line = 1;
  for (char c : before) line += c == '\n' ? 1 : 0;
  dir.write("appended.yaml", appended);
  ProcessResult append =
      testing::run_process({{"/bin/sh", "-c", "cat appended.yaml >> queue.yaml"}, dir.path()});
  ASSERT_EQ(append.status, 0) << append.err;

  EXPECT_TRUE(run.wait_for_output(fmt::format("queue line {}", line), 10s)) << run.peek_err();
  EXPECT_NE(run.peek_err().find("nested too deeply"), std::string::npos) << run.peek_err();
  EXPECT_TRUE(run.wait_for_output("] long job done", 10s)) << run.peek_err();
  EXPECT_TRUE(dir.read("queue.yaml") == before + appended) << "queue.yaml changed";
  EXPECT_EQ(testing::job_lines(run.peek_out()).find("] behind"), std::string::npos);

  dir.write("queue.yaml", "- echo fixed\n- echo behind\n");
  EXPECT_TRUE(run.wait_for_output("] behind", 10s)) << run.peek_err();
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 130) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] fixed\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace runner
