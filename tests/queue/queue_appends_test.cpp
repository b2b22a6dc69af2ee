// Tests for what others append to the queue with `>>` (no lock) while it is
// rewritten: during a take, into the replaced file after its rename, and
// during a whole-queue edit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "runner/queue/queue_edit.h"
#include "runner/queue/queue_file.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

bool always(const JobSpec&) { return true; }

// A shell's `>> file`: opened for appending, written when asked.
class Appender {
 public:
  explicit Appender(const std::string& path)
      : m_fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) {}
  ~Appender() { ::close(m_fd); }
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;
  bool write(const std::string& text) {
    return ::write(m_fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  }

 private:
  int m_fd;
};

std::string command_of(const TakeResult& result) {
  const auto* taken = std::get_if<Taken>(&result);
  return taken ? taken->job.command : "(nothing taken)";
}

TEST(QueueAppendsTest, AnAppendDuringATakeIsKeptAndTheTakeGoesOn) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- first\n- second\n"));
  bool appended = false;
  TakeBatch batch = queue.take_while([&](const JobSpec&) {
    if (!appended) appended = Appender(dir.file("queue.yaml")).write("- appended\n");
    return batch.taken.empty();
  });
  ASSERT_EQ(batch.taken.size(), 1u);
  EXPECT_EQ(batch.taken[0].command, "first");
  EXPECT_EQ(dir.read("queue.yaml"), "- second\n- appended\n");
}

TEST(QueueAppendsTest, AnAppendIntoTheReplacedFileReachesTheQueueOnTheNextTake) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", "- first\n- second\n"));
  // Opened before the take renames a new file over this one, written after.
  Appender late(dir.file("queue.yaml"));
  EXPECT_EQ(command_of(queue.take_first(always)), "first");
  ASSERT_TRUE(late.write("- late\n"));
  EXPECT_EQ(dir.read("queue.yaml"), "- second\n") << "the write went to the replaced file";
  EXPECT_EQ(command_of(queue.take_first(always)), "second");
  EXPECT_EQ(command_of(queue.take_first(always)), "late");
  EXPECT_TRUE(std::holds_alternative<QueueEmpty>(queue.take_first(always)));
}

TEST(QueueAppendsTest, AnAppendIntoTheReplacedFileIsKeptWhenTheRunEnds) {
  testing::TempDir dir;
  dir.write("queue.yaml", "- first\n");
  {
    QueueFile queue(dir.file("queue.yaml"));
    Appender late(dir.file("queue.yaml"));
    EXPECT_EQ(command_of(queue.take_first(always)), "first");
    ASSERT_TRUE(late.write("- late\n"));
  }
  // After the empty list the drained queue was written as.
  EXPECT_EQ(dir.read("queue.yaml"), "[]\n- late\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST(QueueAppendsTest, AnEditKeepsWhatWasAppendedWhileItWasMade) {
  testing::TempDir dir;
  dir.write("queue.yaml", "- a\n");
  Result<QueueEdit> edit = QueueEdit::begin(dir.file("queue.yaml"));
  ASSERT_TRUE(edit.ok()) << edit.status().message();
  ASSERT_TRUE(Appender(dir.file("queue.yaml")).write("- appended\n"));
  ASSERT_TRUE(testing::value_of(edit->save("- edited\n")));
  EXPECT_EQ(dir.read("queue.yaml"), "- edited\n- appended\n");
}

TEST(QueueAppendsTest, AnEditIsNotSavedOverAFileAnotherProgramReplaced) {
  testing::TempDir dir;
  dir.write("queue.yaml", "- a\n");
  Result<QueueEdit> edit = QueueEdit::begin(dir.file("queue.yaml"));
  ASSERT_TRUE(edit.ok()) << edit.status().message();
  ASSERT_TRUE(write_file_atomically(dir.file("queue.yaml"), "- someone else\n"));
  EXPECT_FALSE(testing::value_of(edit->save("- edited\n")));
  EXPECT_EQ(dir.read("queue.yaml"), "- someone else\n");
}

TEST(QueueAppendsTest, AnEditOfAMissingQueueCreatesIt) {
  testing::TempDir dir;
  Result<QueueEdit> edit = QueueEdit::begin(dir.file("queue.yaml"));
  ASSERT_TRUE(edit.ok()) << edit.status().message();
  EXPECT_EQ(edit->original(), "");
  ASSERT_TRUE(testing::value_of(edit->save("- new\n")));
  EXPECT_EQ(dir.read("queue.yaml"), "- new\n");
}

}  // namespace
}  // namespace runner
