// The real binary on a queue that Pegasus shares: whatever runner writes into
// queue.yaml and consumed.yaml stays a file Pegasus' parser reads (a list of
// entries, each a string or a mapping whose every value is a list of
// strings), from the first take to the drained queue.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

// Empty when Pegasus 1.4.0 reads `text` as a queue; else why not.
std::string pegasus_refuses(const std::string& text) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    return error.what();
  }
  if (!root.IsSequence()) return "not a list";
  for (const auto& entry : root) {
    if (entry.IsScalar()) continue;
    if (!entry.IsMap()) return "an entry that is neither a string nor a mapping";
    for (const auto& pair : entry) {
      if (!pair.second.IsSequence()) return "`" + pair.first.as<std::string>() + "` is not a list";
      for (const auto& value : pair.second)
        if (!value.IsScalar()) return "a value that is not a string";
    }
  }
  return "";
}

TEST(PegasusQueue, WhatRunnerWritesInTheQueueAndConsumedYamlPegasusReads) {
  testing::TempDir dir;
  dir.write("hosts.yaml", "- localhost\n");
  // Each job keeps the queue and consumed.yaml as they are while it runs.
  dir.write("queue.yaml",
            "# a Pegasus queue\n"
            "- command:\n"
            "    - cp queue.yaml q{{ m }}{{ n }} && cp consumed.yaml c{{ m }}{{ n }}\n"
            "  m: [a, b]\n"
            "  n: [x, y]\n"
            "- echo last\n");
  auto spec = testing::runner_spec({"queue", "--no-status"}, dir.path());
  testing::ProcessResult r = testing::run_process(spec);
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  for (std::string job : {"ax", "ay", "bx", "by"}) {
    SCOPED_TRACE(job);
    std::string queue = dir.read("q" + job);
    EXPECT_EQ(pegasus_refuses(queue), "") << queue;
    std::string consumed = dir.read("c" + job);
    EXPECT_EQ(pegasus_refuses(consumed), "") << consumed;
  }
  std::string drained = dir.read("queue.yaml");
  EXPECT_EQ(drained, "# a Pegasus queue\n[]\n");
  EXPECT_EQ(pegasus_refuses(drained), "");
  EXPECT_EQ(pegasus_refuses(dir.read("consumed.yaml")), "") << dir.read("consumed.yaml");
}

TEST(PegasusQueue, JobsAppendedToADrainedQueueRun) {
  testing::TempDir dir;
  dir.write("hosts.yaml", "- localhost\n");
  dir.write("queue.yaml", "[]\n- echo appended-after-the-empty-list\n");
  auto spec = testing::runner_spec({"queue", "--no-status"}, dir.path());
  testing::ProcessResult r = testing::run_process(spec);
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("appended-after-the-empty-list"), std::string::npos) << r.out;
  EXPECT_EQ(dir.read("queue.yaml"), "[]\n");
}

}  // namespace
}  // namespace runner
