// Tests for resolving a queue path: links followed, relative ones from
// their own folder, also when the file they lead to does not exist yet.
#include "runner/queue/real_queue_path.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/temp_dir.h"

namespace runner {
namespace {

TEST(RealQueuePathTest, FollowsRelativeLinksAndLinksToFilesNotYetCreated) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("shared"));
  std::filesystem::create_directories(dir.file("work"));
  std::filesystem::create_symlink("../shared/queue.yaml", dir.file("work/queue.yaml"));
  std::filesystem::create_symlink("work/queue.yaml", dir.file("queue.yaml"));
  std::string expected =
      std::filesystem::weakly_canonical(dir.file("shared")).string() + "/queue.yaml";
  EXPECT_EQ(real_queue_path(dir.file("queue.yaml")), expected) << "target does not exist yet";
  dir.write("shared/queue.yaml", "");
  EXPECT_EQ(real_queue_path(dir.file("queue.yaml")), expected);
  EXPECT_EQ(real_queue_path(dir.file("work/../queue.yaml")), expected);
}

TEST(RealQueuePathTest, AFileThatIsNoLinkIsItsOwnRealPath) {
  testing::TempDir dir;
  std::string real = std::filesystem::weakly_canonical(dir.path()).string();
  EXPECT_EQ(real_queue_path(dir.file("queue.yaml")), real + "/queue.yaml");
  dir.write("queue.yaml", "");
  EXPECT_EQ(real_queue_path(dir.file("queue.yaml")), real + "/queue.yaml");
}

TEST(RealQueuePathTest, ALinkLoopStopsResolving) {
  testing::TempDir dir;
  std::filesystem::create_symlink("b.yaml", dir.file("a.yaml"));
  std::filesystem::create_symlink("a.yaml", dir.file("b.yaml"));
  std::string resolved = real_queue_path(dir.file("a.yaml"));
  EXPECT_TRUE(resolved.ends_with("/a.yaml") || resolved.ends_with("/b.yaml")) << resolved;
}

}  // namespace
}  // namespace runner
