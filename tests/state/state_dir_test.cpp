// Naming and creating the state directory beside a queue file.
#include "runner/state/state_dir.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "support/temp_dir.h"

namespace runner {
namespace {

TEST(StateDir, NamedAfterTheQueueFile) {
  EXPECT_EQ(state_dir_for("dir/queue.yaml"), "dir/queue.runner");
  EXPECT_EQ(state_dir_for("/abs/q.yml"), "/abs/q.runner");
  EXPECT_EQ(state_dir_for("queue.YAML"), "queue.runner");
  EXPECT_EQ(state_dir_for("jobs"), "jobs.runner");
  EXPECT_EQ(state_dir_for("jobs.txt"), "jobs.txt.runner");
  EXPECT_EQ(state_dir_for("my.yaml.d/queue"), "my.yaml.d/queue.runner");
  EXPECT_EQ(state_dir_for("dir/.yaml"), "dir/.yaml.runner");
}

TEST(StateDir, CreatedWithItsLogsFolderOnDemand) {
  testing::TempDir temp;
  std::string dir = state_dir_for(temp.file("queue.yaml"));
  EXPECT_FALSE(std::filesystem::exists(dir));
  EXPECT_TRUE(ensure_state_dir(dir).ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/logs"));
  EXPECT_EQ(logs_dir(dir), dir + "/logs");
  EXPECT_TRUE(ensure_state_dir(dir).ok());  // already there: fine
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/logs"));
}

TEST(StateDir, FailureNamesThePath) {
  testing::TempDir temp;
  std::string blocker = temp.write("queue.runner", "a file, not a folder");
  Status created = ensure_state_dir(blocker);
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.message().rfind("cannot create the state directory " + blocker + "/logs: ", 0),
            0u)
      << created.message();
}

}  // namespace
}  // namespace runner
