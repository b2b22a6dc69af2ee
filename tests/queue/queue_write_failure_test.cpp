// The queue file when a write, an fsync or the rename of its new text fails,
// injected through the FileSystem seam: the take or the append reports the
// failure naming the file and the reason, takes or adds nothing, and the
// queue is left exactly as it was, with no temporary file beside it.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include "runner/queue/queue_file.h"
#include "support/failing_file_system.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using Operation = testing::FailingFileSystem::Operation;

const std::string k_queue =
    "# campaign\n"
    "- echo one\n"
    "- echo two\n";

bool always(const JobSpec&) { return true; }

class QueueWriteFailureTest : public ::testing::Test {
 protected:
  QueueWriteFailureTest() : m_path(m_dir.write("queue.yaml", k_queue)) {}

  // Whatever the failure, the queue holds what it held and nothing else is
  // left in its folder.
  void expect_queue_untouched() const {
    EXPECT_EQ(m_dir.read("queue.yaml"), k_queue);
    for (const auto& entry : std::filesystem::directory_iterator(m_dir.path())) {
      std::string name = entry.path().filename().string();
      EXPECT_TRUE(name == "queue.yaml") << "left behind: " << name;
    }
  }

  // A take under `m_files` takes nothing and gives a reason holding each of
  // `parts`; once healed, it takes the first job.
  void expect_take_fails_naming(const std::vector<std::string>& parts) {
    QueueFile queue(m_path, {}, m_files);
    TakeBatch batch = queue.take_while(always);
    EXPECT_TRUE(batch.taken.empty());
    const auto* unavailable = std::get_if<QueueUnavailable>(&batch.stopped);
    ASSERT_NE(unavailable, nullptr);
    for (const std::string& part : parts)
      EXPECT_NE(unavailable->reason.find(part), std::string::npos)
          << "no \"" << part << "\" in: " << unavailable->reason;
    EXPECT_GT(m_files.failed_calls(), 0);
    expect_queue_untouched();

    m_files.heal();
    EXPECT_TRUE(std::holds_alternative<Taken>(queue.take_first(always)));
    EXPECT_EQ(m_dir.read("queue.yaml"), "# campaign\n- echo two\n");
  }

  testing::TempDir m_dir;
  std::string m_path;
  testing::FailingFileSystem m_files;
};

TEST_F(QueueWriteFailureTest, TakeOnAFullDiskTakesNothingAndKeepsTheQueue) {
  m_files.fail(Operation::write, ".tmp", ENOSPC, /*bytes_before=*/8);
  expect_take_fails_naming(
      {"cannot write " + m_dir.path() + "/.queue.yaml.", ".tmp", "No space left on device"});
}

TEST_F(QueueWriteFailureTest, TakeThatCannotSyncTheNewQueueTakesNothingAndKeepsTheQueue) {
  m_files.fail(Operation::fsync, ".tmp", EIO);
  expect_take_fails_naming(
      {"cannot sync " + m_dir.path() + "/.queue.yaml.", ".tmp", "Input/output error"});
}

TEST_F(QueueWriteFailureTest, TakeThatCannotRenameTakesNothingAndKeepsTheQueue) {
  m_files.fail(Operation::rename, "queue.yaml", EIO);
  expect_take_fails_naming({"cannot replace " + m_path, "Input/output error"});
}

TEST_F(QueueWriteFailureTest, AppendOnAFullDiskFailsNamingTheFileAndKeepsTheQueue) {
  QueueFile queue(m_path, {}, m_files);
  m_files.fail(Operation::write, ".tmp", ENOSPC);
  Status added = queue.append("- echo three\n");
  ASSERT_FALSE(added.ok()) << "the append reported no failure";
  EXPECT_NE(added.message().find("cannot write " + m_dir.path() + "/.queue.yaml."),
            std::string::npos)
      << added.message();
  EXPECT_NE(added.message().find("No space left on device"), std::string::npos) << added.message();
  expect_queue_untouched();
}

}  // namespace
}  // namespace runner
