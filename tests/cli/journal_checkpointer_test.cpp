// A run's checkpoint of its journal: brought up to date by a child process
// while the run goes on, one child at a time.
#include "runner/cli/journal_checkpointer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "runner/state/journal.h"
#include "runner/state/journal_checkpoint.h"
#include "runner/state/state_dir.h"
#include "support/temp_dir.h"
#include "support/value_of.h"
#include "support/wait.h"

namespace runner {
namespace {

using testing::TempDir;
using testing::wait_until;

TEST(JournalCheckpointer, AChildWritesTheCheckpointOfTheJournalSoFar) {
  TempDir dir;
  ASSERT_TRUE(ensure_state_dir(dir.path()).ok());
  {
    Journal journal = testing::value_of(Journal::open(dir.path()));
    ASSERT_TRUE(journal.run_start("queue", "hosts.yaml", "queue.yaml").ok());
    JobStartRecord start;
    start.job = journal.next_job_id();
    start.command = "true";
    ASSERT_TRUE(journal.job_start(start).ok());
    ASSERT_TRUE(journal.sync().ok());
  }
  ASSERT_FALSE(load_journal_checkpoint(dir.path()));
  {
    JournalCheckpointer checkpointer(dir.path());
    EXPECT_TRUE(checkpointer.refresh_in_background());
  }  // waits for the child
  std::optional<JournalCheckpoint> checkpoint = load_journal_checkpoint(dir.path());
  ASSERT_TRUE(checkpoint);
  EXPECT_FALSE(checkpoint->records.empty());
}

TEST(JournalCheckpointer, NoSecondChildWhileTheFirstStillReads) {
  TempDir dir;
  ASSERT_TRUE(ensure_state_dir(dir.path()).ok());
  // A journal that is a pipe holds the child in its opening until a writer
  // comes, and in its reading until the writer goes.
  std::string journal = dir.file("journal.jsonl");
  ASSERT_EQ(mkfifo(journal.c_str(), 0600), 0);
  JournalCheckpointer checkpointer(dir.path());
  ASSERT_TRUE(checkpointer.refresh_in_background());
  EXPECT_FALSE(checkpointer.refresh_in_background());
  int writer = -1;
  ASSERT_TRUE(wait_until(
      [&] {
        writer = ::open(journal.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        return writer >= 0;
      },
      std::chrono::seconds(10)))
      << "the child never opened the journal";

  ::close(writer);  // the child reads the end of the journal, and ends
  ASSERT_EQ(::unlink(journal.c_str()), 0);
  EXPECT_TRUE(
      wait_until([&] { return checkpointer.refresh_in_background(); }, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace runner
