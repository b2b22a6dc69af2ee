// Tests for a queue entry's `push:` and `push_to:`: a list of paths is one
// step's files, not a product; a step may be the copy alone; both survive
// the trip through consumed.yaml.
#include <gtest/gtest.h>

#include "runner/config/config_error.h"
#include "runner/config/queue_entry.h"
#include "support/config_failure.h"
#include "support/value_of.h"

namespace runner {
namespace {

Result<QueueEntry> parsed(const std::string& yaml) {
  YAML::Node root = YAML::Load(yaml);
  return parse_queue_entry(root[0], "queue.yaml");
}

QueueEntry entry_from(const std::string& yaml) { return testing::value_of(parsed(yaml)); }

TEST(QueueEntryPush, AListOfPathsIsOneJobsFiles) {
  std::vector<JobSpec> jobs =
      expand(entry_from("- command: ./setup.sh\n  push: [data, model.bin]\n  push_to: work\n"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].push, "data model.bin");
  EXPECT_EQ(jobs[0].push_to, "work");
  EXPECT_TRUE(jobs[0].params.empty());
}

TEST(QueueEntryPush, AStepMayBeTheCopyAlone) {
  std::vector<JobSpec> jobs = expand(entry_from("- push: data\n"));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].command, "");
  EXPECT_EQ(jobs[0].push, "data");
}

TEST(QueueEntryPush, APathWithASpaceIsRefusedNamingItsLine) {
  {
    ConfigError error =
        testing::failure_of(parsed("- command: x\n  push:\n    - data\n    - my file\n"));
    EXPECT_NE(std::string(error.what()).find("queue.yaml:4"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("`push` takes paths without spaces, not `my file`"),
              std::string::npos)
        << error.what();
  }
}

TEST(QueueEntryPush, PushKeysSurviveConsumedYaml) {
  JobSpec job = expand(entry_from("- command: x\n  push: [a, b]\n  push_to: w\n")).front();
  std::vector<JobSpec> again = expand(entry_from(entry_to_yaml(canonical_entry(job), 0)));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].push, "a b");
  EXPECT_EQ(again[0].push_to, "w");
  EXPECT_TRUE(is_reserved_job_key("push") && is_reserved_job_key("push_to"));
}

}  // namespace
}  // namespace runner
