// The journal and the job logs on a file system that fills up (a small
// tmpfs): every failure is returned, no record is ever torn or lost, records
// wait and are written in order when space returns, and a log says where
// and how much output is missing. Then the same with failures injected
// through the FileSystem seam (no tmpfs, so no privileges needed): ENOSPC
// part way through a write, EIO on fsync or open, each returned as a Status
// naming the file and the reason, no file left holding less than it held.
#include <gtest/gtest.h>

#include <cerrno>
#include <sstream>

#include "runner/state/job_log.h"
#include "runner/state/journal.h"
#include "runner/state/state_dir.h"
#include "support/failing_file_system.h"
#include "support/small_tmpfs.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

class FullDiskTest : public ::testing::Test {
 protected:
  FullDiskTest() : m_fs(m_temp.file("fs"), "256k"), m_dir(m_temp.file("fs/q.runner")) {}
  void SetUp() override {
    RUNNER_REQUIRE_TMPFS(m_fs);
    EXPECT_TRUE(ensure_state_dir(m_dir).ok());
  }
  std::string file(const std::string& name) const { return m_temp.read("fs/q.runner/" + name); }

  testing::TempDir m_temp;
  testing::SmallTmpfs m_fs;
  std::string m_dir;
};

// Each line of `text` is one JSON object; returns their "job" fields.
std::vector<int> whole_records(const std::string& text) {
  std::vector<int> jobs;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    EXPECT_TRUE(record.is_object()) << "a torn line: " << line;
    if (record.is_object()) jobs.push_back(record.value("job", 0));
  }
  EXPECT_TRUE(text.empty() || text.back() == '\n') << "the journal ends in part of a line";
  return jobs;
}

TEST_F(FullDiskTest, JournalRecordsWaitWholeAndAreWrittenInOrderWhenSpaceReturns) {
  Journal journal = testing::value_of(Journal::open(m_dir));
  JobStartRecord start;
  start.command = std::string(1500, 'c');  // a few records per page: some are cut by the disk
  int written = 0, failed = 0;
  for (start.job = 1; start.job <= 3; ++start.job) ASSERT_TRUE(journal.job_start(start));
  ASSERT_TRUE(m_fs.fill());
  for (start.job = 4; start.job <= 20; ++start.job) {
    Status status = journal.job_start(start);
    if (status.ok()) {
      ++written;  // what still fits in the journal's last page
      continue;
    }
    ++failed;
    EXPECT_NE(status.message().find("cannot write to the journal " + journal.path()),
              std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("No space left on device"), std::string::npos);
  }
  EXPECT_GT(failed, 0);
  EXPECT_EQ(journal.waiting(), std::size_t(20 - 3 - written));
  EXPECT_FALSE(journal.sync().ok());
  std::vector<int> on_disk = whole_records(file("journal.jsonl"));
  EXPECT_EQ(on_disk.size(), std::size_t(3 + written));

  m_fs.free_space();
  EXPECT_TRUE(journal.sync().ok());
  EXPECT_EQ(journal.waiting(), 0u);
  on_disk = whole_records(file("journal.jsonl"));
  std::vector<int> expected;
  for (int job = 1; job <= 20; ++job) expected.push_back(job);
  EXPECT_EQ(on_disk, expected);
}

TEST_F(FullDiskTest, JobLogSaysWhereOutputIsMissingAndCloseSaysItIsIncomplete) {
  JobLogs logs(m_dir, 64, /*buffer_size=*/16);
  ASSERT_TRUE(logs.open(1));
  ASSERT_TRUE(logs.append(1, "before the disk filled\n"));
  ASSERT_TRUE(m_fs.fill());
  std::string lost(10000, 'l');
  Status failed = logs.append(1, lost);
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find(logs.path(1)), std::string::npos) << failed.message();
  m_fs.free_space();
  ASSERT_TRUE(logs.append(1, "after space returned\n"));
  Status closed = logs.close(1);
  EXPECT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find("is incomplete"), std::string::npos) << closed.message();
  std::string text = file("logs/1.log");
  EXPECT_EQ(text.rfind("before the disk filled\n", 0), 0u) << text;
  EXPECT_NE(text.find("bytes of output are missing here"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 21), "after space returned\n");

  // A new opening starts whole again.
  ASSERT_TRUE(logs.open(1));
  ASSERT_TRUE(logs.append(1, "fresh\n"));
  EXPECT_TRUE(logs.close(1));
  EXPECT_EQ(file("logs/1.log"), "fresh\n");
}

// ---------------------------------------------------------------------------
// Failures injected through the FileSystem seam

using Operation = testing::FailingFileSystem::Operation;

class InjectedFailureTest : public ::testing::Test {
 protected:
  InjectedFailureTest() : m_dir(m_temp.file("q.runner")) {
    EXPECT_TRUE(ensure_state_dir(m_dir).ok());
  }
  std::string file(const std::string& name) const { return m_temp.read("q.runner/" + name); }

  testing::TempDir m_temp;
  std::string m_dir;
  testing::FailingFileSystem m_files;
};

JobStartRecord started(JobId job) {
  JobStartRecord record;
  record.job = job;
  record.command = "echo " + std::to_string(job);
  return record;
}

TEST_F(InjectedFailureTest, JournalAppendOnAFullDiskNamesTheJournalAndKeepsWhatItHeld) {
  Journal journal = testing::value_of(Journal::open(m_dir, false, m_files));
  ASSERT_TRUE(journal.job_start(started(1)));
  ASSERT_TRUE(journal.job_start(started(2)));
  std::string before = file("journal.jsonl");
  // Part of the next record fits, then the disk is full.
  m_files.fail(Operation::write, "journal.jsonl", ENOSPC, 20);

  Status failed = journal.job_start(started(3));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("cannot write to the journal " + journal.path()),
            std::string::npos)
      << failed.message();
  EXPECT_NE(failed.message().find("No space left on device"), std::string::npos);
  EXPECT_EQ(file("journal.jsonl"), before) << "the part written is cut off again";
  EXPECT_EQ(journal.waiting(), 1u);

  m_files.heal();
  EXPECT_TRUE(journal.sync());
  EXPECT_EQ(whole_records(file("journal.jsonl")), (std::vector<int>{1, 2, 3}));
}

TEST_F(InjectedFailureTest, DurableJournalReportsAFailedSyncNamingTheJournal) {
  Journal journal = testing::value_of(Journal::open(m_dir, /*durable=*/true, m_files));
  ASSERT_TRUE(journal.job_start(started(1)));
  m_files.fail(Operation::fsync, "journal.jsonl", EIO);

  Status failed = journal.job_start(started(2));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("cannot sync the journal " + journal.path()), std::string::npos)
      << failed.message();
  EXPECT_NE(failed.message().find("Input/output error"), std::string::npos);
  EXPECT_FALSE(journal.sync().ok()) << "still not durable";

  m_files.heal();
  EXPECT_TRUE(journal.sync());
  EXPECT_EQ(whole_records(file("journal.jsonl")), (std::vector<int>{1, 2}));
}

TEST_F(InjectedFailureTest, JobLogWriteOnAFullDiskNamesTheLogAndKeepsWhatItHeld) {
  JobLogs logs(m_dir, 64, /*buffer_size=*/16, m_files);
  ASSERT_TRUE(logs.open(1));
  ASSERT_TRUE(logs.append(1, "before the disk filled\n"));
  ASSERT_TRUE(logs.flush());
  m_files.fail(Operation::write, "logs/1.log", ENOSPC, 5);

  Status failed = logs.append(1, std::string(100, 'x'));
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("cannot write the job log " + logs.path(1)), std::string::npos)
      << failed.message();
  EXPECT_NE(failed.message().find("No space left on device"), std::string::npos);
  EXPECT_EQ(file("logs/1.log").rfind("before the disk filled\n", 0), 0u);

  Status closed = logs.close(1);
  EXPECT_FALSE(closed.ok());
  EXPECT_NE(closed.message().find(logs.path(1) + " is incomplete: 95 bytes"), std::string::npos)
      << closed.message();
}

TEST_F(InjectedFailureTest, JobLogThatCannotBeOpenedSaysSoAtOnceAndOnClose) {
  JobLogs logs(m_dir, 64, 16, m_files);
  m_files.fail(Operation::open, "logs/1.log", EIO);

  Status failed = logs.open(1);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("cannot open the job log " + logs.path(1) +
                                  ": Input/output error"),
            std::string::npos)
      << failed.message();
  Status closed = logs.close(1);
  EXPECT_NE(closed.message().find("could not be created"), std::string::npos)
      << closed.message();
}

}  // namespace
}  // namespace runner
