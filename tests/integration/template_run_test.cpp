// The real binary renders Handlebars templates on a local slot: blocks,
// helpers and shell heredocs in one command, and an unknown helper refused
// before anything runs.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

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

}  // namespace
}  // namespace runner
