// Tests for the queue lock file: exclusive creation, the pid inside, stale
// locks of dead processes broken with a warning, Pegasus' empty lock files
// respected, and release removing only our own lock.
#include "runner/queue/queue_lock.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::LiveProcess;

// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

struct Warnings {
  std::vector<std::string> messages;
  QueueLock::Warn callback() {
    return [this](const std::string& message) { messages.push_back(message); };
  }
};

std::string own_pid_line() { return std::to_string(::getpid()) + "\n"; }

TEST(QueueLockTest, LockPathIsQueuePathPlusLock) {
  EXPECT_EQ(QueueLock::lock_path("/q/queue.yaml"), "/q/queue.yaml.lock");
}

TEST(QueueLockTest, AcquireWritesOurPidAndReleaseRemovesTheFile) {
  testing::TempDir dir;
  std::string queue = dir.file("queue.yaml");
  {
    std::optional<QueueLock> lock = testing::value_of(QueueLock::try_acquire(queue, {}));
    ASSERT_TRUE(lock.has_value());
    EXPECT_EQ(dir.read("queue.yaml.lock"), own_pid_line());
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueLockTest, SecondAcquireFailsWhileHeld) {
  testing::TempDir dir;
  std::string queue = dir.file("queue.yaml");
  std::optional<QueueLock> lock = testing::value_of(QueueLock::try_acquire(queue, {}));
  ASSERT_TRUE(lock.has_value());
  std::string holder;
  EXPECT_FALSE(testing::value_of(QueueLock::try_acquire(queue, {}, &holder)).has_value());
  EXPECT_EQ(holder, "pid " + std::to_string(::getpid()));
  lock.reset();
  EXPECT_TRUE(testing::value_of(QueueLock::try_acquire(queue, {})).has_value());
}

TEST(QueueLockTest, LockOfALiveProcessIsRespected) {
  testing::TempDir dir;
  LiveProcess other;
  std::string content = std::to_string(other.pid()) + "\n";
  dir.write("queue.yaml.lock", content);
  Warnings warnings;
  std::string holder;
  EXPECT_FALSE(testing::value_of(
      QueueLock::try_acquire(dir.file("queue.yaml"), warnings.callback(), &holder)));
  EXPECT_EQ(holder, "pid " + std::to_string(other.pid()));
  EXPECT_TRUE(warnings.messages.empty());
  EXPECT_EQ(dir.read("queue.yaml.lock"), content);
}

TEST(QueueLockTest, StaleLockOfADeadProcessIsBrokenWithAWarning) {
  testing::TempDir dir;
  pid_t dead = dead_pid();
  dir.write("queue.yaml.lock", std::to_string(dead) + "\n");
  Warnings warnings;
  std::optional<QueueLock> lock =
      testing::value_of(QueueLock::try_acquire(dir.file("queue.yaml"), warnings.callback()));
  ASSERT_TRUE(lock.has_value());
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_EQ(warnings.messages[0], "breaking stale lock " + dir.file("queue.yaml.lock") +
                                      " left by pid " + std::to_string(dead) +
                                      ", which is not running");
  EXPECT_EQ(dir.read("queue.yaml.lock"), own_pid_line());
}

TEST(QueueLockTest, EmptyLockFileAsPegasusWritesIsHeld) {
  testing::TempDir dir;
  dir.write("queue.yaml.lock", "");
  Warnings warnings;
  std::string holder;
  EXPECT_FALSE(testing::value_of(
      QueueLock::try_acquire(dir.file("queue.yaml"), warnings.callback(), &holder)));
  EXPECT_NE(holder.find("no pid"), std::string::npos) << holder;
  EXPECT_NE(holder.find("remove that file"), std::string::npos) << "says what to do: " << holder;
  EXPECT_TRUE(warnings.messages.empty());
  EXPECT_TRUE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueLockTest, ReleaseLeavesALockThatIsNoLongerOurs) {
  testing::TempDir dir;
  LiveProcess other;
  {
    std::optional<QueueLock> lock =
        testing::value_of(QueueLock::try_acquire(dir.file("queue.yaml"), {}));
    ASSERT_TRUE(lock.has_value());
    // Broken as stale by a process that cannot see ours, and taken.
    std::filesystem::remove(dir.file("queue.yaml.lock"));
    dir.write("queue.yaml.lock", std::to_string(other.pid()) + "\n");
  }
  EXPECT_EQ(dir.read("queue.yaml.lock"), std::to_string(other.pid()) + "\n");
}

TEST(QueueLockTest, ReleaseLeavesAnotherLockMovedOverOurs) {
  testing::TempDir dir;
  {
    std::optional<QueueLock> lock =
        testing::value_of(QueueLock::try_acquire(dir.file("queue.yaml"), {}));
    ASSERT_TRUE(lock.has_value());
    dir.write("other.lock", "");
    std::filesystem::rename(dir.file("other.lock"), dir.file("queue.yaml.lock"));
  }
  EXPECT_TRUE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueLockTest, ReleaseOfALockSomeoneRemovedIsQuiet) {
  testing::TempDir dir;
  Warnings warnings;
  {
    std::optional<QueueLock> lock =
        testing::value_of(QueueLock::try_acquire(dir.file("queue.yaml"), warnings.callback()));
    ASSERT_TRUE(lock.has_value());
    std::filesystem::remove(dir.file("queue.yaml.lock"));
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
  EXPECT_TRUE(warnings.messages.empty());
}

TEST(QueueLockTest, MovingHandsOverTheRelease) {
  testing::TempDir dir;
  std::optional<QueueLock> first =
      testing::value_of(QueueLock::try_acquire(dir.file("queue.yaml"), {}));
  ASSERT_TRUE(first.has_value());
  {
    QueueLock moved(std::move(*first));
    first.reset();
    EXPECT_TRUE(std::filesystem::exists(dir.file("queue.yaml.lock")));
    std::optional<QueueLock> other =
        testing::value_of(QueueLock::try_acquire(dir.file("other.yaml"), {}));
    ASSERT_TRUE(other.has_value());
    moved = std::move(*other);
    // Assigning released the queue.yaml lock and took over other.yaml's.
    EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
    other.reset();
    EXPECT_TRUE(std::filesystem::exists(dir.file("other.yaml.lock")));
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("other.yaml.lock")));
}

// As QueueFile::append waits for the lock: each try assigned over the last
// one's Result, the lock then moved on; the file goes with its last holder.
TEST(QueueLockTest, ALockAssignedAndMovedThroughResultsIsReleasedOnceByItsLastHolder) {
  testing::TempDir dir;
  std::string queue = dir.file("queue.yaml");
  std::optional<QueueLock> other = testing::value_of(QueueLock::try_acquire(queue, {}));
  ASSERT_TRUE(other.has_value());
  {
    Result<std::optional<QueueLock>> lock = std::optional<QueueLock>();
    lock = QueueLock::try_acquire(queue, {});
    ASSERT_TRUE(lock.ok());
    EXPECT_FALSE(lock->has_value());
    other.reset();
    lock = QueueLock::try_acquire(queue, {});
    ASSERT_TRUE(lock.ok());
    ASSERT_TRUE(lock->has_value());
    Result<std::optional<QueueLock>> moved = std::move(lock);
    lock = std::optional<QueueLock>();
    EXPECT_EQ(dir.read("queue.yaml.lock"), own_pid_line()) << "released by the moved-from result";
    ASSERT_TRUE(moved.ok());
    QueueLock last = std::move(**moved);
    moved = std::optional<QueueLock>();
    EXPECT_EQ(dir.read("queue.yaml.lock"), own_pid_line()) << "released by the moved-from lock";
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock"))) << "leaked";
}

TEST(QueueLockTest, MissingDirectoryIsAnError) {
  testing::TempDir dir;
  EXPECT_FALSE(QueueLock::try_acquire(dir.file("no/such/queue.yaml"), {}).ok());
}

}  // namespace
}  // namespace runner
