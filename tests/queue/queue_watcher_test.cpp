// QueueWatcher's making: a failure is a value that names the folder, the
// call, the reason and the fix. (What it reports once made is tested with
// QueueFile in queue_file_test.cpp.)
#include "runner/queue/queue_watcher.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "runner/queue/queue_file.h"
#include "support/descriptors_used_up.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

TEST(QueueWatcherTest, AWatcherThatCannotBeMadeSaysWhyAndHowToFixIt) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- a\n"));
  Result<std::unique_ptr<QueueWatcher>> opened = Status::error("not tried");
  {
    testing::DescriptorsUsedUp used_up;
    ASSERT_TRUE(used_up.ok());
    opened = QueueWatcher::open(queue.path(), queue.own_changes(), [] {});
  }
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("cannot watch " + dir.path()), std::string::npos)
      << opened.status().message();
  EXPECT_NE(opened.status().message().find("inotify_init1: Too many open files"), std::string::npos)
      << opened.status().message();
  EXPECT_NE(opened.status().message().find("fs.inotify.max_user_instances"), std::string::npos)
      << "names the fix: " << opened.status().message();
}

}  // namespace
}  // namespace runner
