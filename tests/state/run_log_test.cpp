// The run log on a real journal: a journal that cannot be written is told
// once until it can be written again, sync() fails meanwhile and holds
// every record once it heals, and the journal's checkpoint is refreshed when
// the live file is sealed and not again until more journal came; a live
// file that cannot be sealed is told once, and syncs go on.
#include "runner/state/run_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

#include "runner/state/state_dir.h"
#include "support/failing_file_system.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using testing::FailingFileSystem;
using testing::TempDir;
using testing::value_of;

// Counts what it is told.
struct CountingListener final : RunLogListener {
  int failing = 0;
  int writable_again = 0;
  int not_sealed = 0;
  void journal_failing(const Status&) override { ++failing; }
  void journal_writable_again() override { ++writable_again; }
  void journal_not_sealed(const Status&) override { ++not_sealed; }
};

std::string state_dir(const TempDir& dir) {
  EXPECT_TRUE(ensure_state_dir(dir.path()).ok());
  return dir.path();
}

JobStartRecord start_of(JobId job) {
  JobStartRecord record;
  record.job = job;
  record.command = "train";
  record.slot = "node01 gpu=0";
  record.host = "node01";
  return record;
}

TEST(RunLog, AJournalThatCannotBeWrittenIsToldOnceAndSyncFailsUntilItCanAgain) {
  TempDir dir;
  FailingFileSystem files;
  Journal journal = value_of(Journal::open(state_dir(dir), false, files));
  CountingListener listener;
  JournalRunLog run_log(journal, listener);

  files.fail(FailingFileSystem::Operation::write, "journal.jsonl", ENOSPC);
  run_log.record_launch(start_of(journal.next_job_id()));
  run_log.record_launch(start_of(journal.next_job_id()));
  EXPECT_FALSE(run_log.sync().ok());
  EXPECT_EQ(listener.failing, 1);
  EXPECT_EQ(listener.writable_again, 0);

  files.heal();
  EXPECT_TRUE(run_log.sync().ok());
  EXPECT_EQ(listener.failing, 1);
  EXPECT_EQ(listener.writable_again, 1);
  EXPECT_EQ(journal.waiting(), 0u);
  std::string written = dir.read("journal.jsonl");
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 2) << written;
}

TEST(RunLog, SyncSealsAFullLiveFileAndHasTheCheckpointRefreshedOnceForIt) {
  TempDir dir;
  Journal journal =
      value_of(Journal::open(state_dir(dir), false, real_file_system(), /*segment_bytes=*/200));
  CountingListener listener;
  JournalRunLog run_log(journal, listener);
  int refreshes = 0;
  run_log.set_checkpoint_refresh([&] { return ++refreshes, true; });

  run_log.record_launch(start_of(journal.next_job_id()));
  EXPECT_TRUE(run_log.sync().ok());
  EXPECT_FALSE(journal.wants_rotation());
  EXPECT_EQ(refreshes, 1);
  EXPECT_TRUE(run_log.sync().ok());
  EXPECT_EQ(refreshes, 1) << "refreshed again with no new journal";
  EXPECT_EQ(listener.not_sealed, 0);
}

TEST(RunLog, ALiveFileThatCannotBeSealedIsToldOnceAndSyncsGoOn) {
  TempDir dir;
  FailingFileSystem files;
  Journal journal = value_of(Journal::open(state_dir(dir), false, files, /*segment_bytes=*/200));
  CountingListener listener;
  JournalRunLog run_log(journal, listener);
  int refreshes = 0;
  run_log.set_checkpoint_refresh([&] { return ++refreshes, true; });

  files.fail(FailingFileSystem::Operation::rename, "journal", EIO);
  run_log.record_launch(start_of(journal.next_job_id()));
  EXPECT_TRUE(run_log.sync().ok());
  run_log.record_launch(start_of(journal.next_job_id()));
  EXPECT_TRUE(run_log.sync().ok());
  EXPECT_TRUE(journal.wants_rotation());
  EXPECT_EQ(listener.not_sealed, 1);
  EXPECT_EQ(listener.failing, 0);
  EXPECT_EQ(refreshes, 0) << "refreshed with less than its bytes and nothing sealed";
}

}  // namespace
}  // namespace runner
