// Job logs hold exactly the bytes each job wrote, whatever the number of
// jobs open at once.
#include "runner/state/job_log.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <tuple>
#include <utility>

#include "runner/state/state_dir.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

class JobLogsTest : public ::testing::Test {
 protected:
  JobLogsTest() : m_dir(m_temp.file("q.runner")) { EXPECT_TRUE(ensure_state_dir(m_dir).ok()); }
  std::string log_text(JobId job) const {
    return m_temp.read("q.runner/logs/" + std::to_string(job) + ".log");
  }

  testing::TempDir m_temp;
  std::string m_dir;
};

TEST_F(JobLogsTest, PathIsPerJob) {
  JobLogs logs(m_dir);
  EXPECT_EQ(logs.path(12), m_dir + "/logs/12.log");
}

TEST_F(JobLogsTest, HoldExactlyTheBytesWritten) {
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  std::string big(100'000, 'b');
  {
    JobLogs logs(m_dir);
    ASSERT_TRUE(logs.open(1));
    ASSERT_TRUE(logs.open(2));
    EXPECT_TRUE(logs.append(1, "out line\n"));
    EXPECT_TRUE(logs.append(2, binary));
    EXPECT_TRUE(logs.append(1, "progress\r"));
    EXPECT_TRUE(logs.append(1, big));
    EXPECT_TRUE(logs.append(2, "partial"));
    EXPECT_TRUE(logs.close(1));
    EXPECT_EQ(log_text(1), "out line\nprogress\r" + big);
  }
  EXPECT_EQ(log_text(2), binary + "partial");
}

TEST_F(JobLogsTest, LongLogsWrittenBehindKeepEveryByteAcrossReruns) {
  // Past a few MiB a log's pages are handed to writeback and released as
  // it grows; a rerun appends to the same file, a fresh run starts over.
  auto chunk = [](int i) {
    std::string text(32 * 1024, static_cast<char>('a' + i % 26));
    text.replace(0, 8, fmt::format("{:08}", i));
    return text;
  };
  std::string expected;
  {
    JobLogs logs(m_dir);
    ASSERT_TRUE(logs.open(1));
    for (int i = 0; i < 700; ++i) {
      if (i == 400) {
        ASSERT_TRUE(logs.open(1, true));
      }
      ASSERT_TRUE(logs.append(1, chunk(i)));
      expected += chunk(i);
    }
    ASSERT_TRUE(logs.open(2));
    for (int i = 0; i < 300; ++i) ASSERT_TRUE(logs.append(2, chunk(i)));
    ASSERT_TRUE(logs.open(2));
    ASSERT_TRUE(logs.append(2, "fresh\n"));
  }
  EXPECT_TRUE(log_text(1) == expected) << "job 1's log differs";
  EXPECT_EQ(log_text(2), "fresh\n");
}

TEST_F(JobLogsTest, ALongLogHasSpaceReservedAheadWhileOpenAndNoneOnceClosed) {
  auto allocated = [&](JobId job) {
    struct stat info {};
    EXPECT_EQ(::stat((m_dir + "/logs/" + std::to_string(job) + ".log").c_str(), &info), 0);
    return std::pair<std::uint64_t, std::uint64_t>(
        info.st_size, static_cast<std::uint64_t>(info.st_blocks) * 512);
  };
  std::string chunk(32 * 1024, 'x');
  std::uint64_t written = 0;
  JobLogs logs(m_dir, 2);
  ASSERT_TRUE(logs.open(1));
  for (int i = 0; i < 24 * 32; ++i, written += chunk.size()) ASSERT_TRUE(logs.append(1, chunk));
  ASSERT_TRUE(logs.flush());
  auto [size, blocks] = allocated(1);
  EXPECT_EQ(size, written);
  EXPECT_GT(blocks, size + (4u << 20)) << "space is reserved past the end while it grows";
  // A log whose descriptor is closed to make room, then the log's close:
  // either way nothing stays reserved, and every byte stays.
  ASSERT_TRUE(logs.open(2));
  ASSERT_TRUE(logs.open(3));
  ASSERT_TRUE(logs.append(2, "a"));
  ASSERT_TRUE(logs.append(3, "b"));
  ASSERT_TRUE(logs.flush());
  std::tie(size, blocks) = allocated(1);
  EXPECT_EQ(size, written);
  EXPECT_LE(blocks, size + 4096) << "released when its descriptor is closed for another log";
  ASSERT_TRUE(logs.append(1, chunk));
  written += chunk.size();
  for (int i = 0; i < 8 * 32; ++i, written += chunk.size()) ASSERT_TRUE(logs.append(1, chunk));
  EXPECT_TRUE(logs.close(1));
  std::tie(size, blocks) = allocated(1);
  EXPECT_EQ(size, written);
  EXPECT_LE(blocks, size + 4096) << "released when the log is closed";
  EXPECT_EQ(log_text(1), std::string(written, 'x'));
}

TEST_F(JobLogsTest, FlushMakesOutputVisibleWhileTheJobRuns) {
  JobLogs logs(m_dir);
  ASSERT_TRUE(logs.open(3));
  EXPECT_TRUE(logs.append(3, "step 1\n"));
  EXPECT_EQ(log_text(3), "");  // still buffered
  EXPECT_TRUE(logs.flush());
  EXPECT_EQ(log_text(3), "step 1\n");
  EXPECT_EQ(logs.open_jobs(), 1u);
}

TEST_F(JobLogsTest, ManyJobsShareFewDescriptors) {
  constexpr int k_jobs = 50;
  JobLogs logs(m_dir, /*max_open_files=*/4, /*buffer_size=*/16);
  for (JobId job = 1; job <= k_jobs; ++job) ASSERT_TRUE(logs.open(job));
  EXPECT_LE(logs.open_files(), 4u);
  for (int round = 0; round < 20; ++round) {
    for (JobId job = 1; job <= k_jobs; ++job) {
      ASSERT_TRUE(
          logs.append(job, "job " + std::to_string(job) + " round " + std::to_string(round) + "\n"))
          << job;
    }
    EXPECT_LE(logs.open_files(), 4u);
  }
  for (JobId job = 1; job <= k_jobs; ++job) ASSERT_TRUE(logs.close(job));
  EXPECT_EQ(logs.open_files(), 0u);
  for (JobId job = 1; job <= k_jobs; ++job) {
    std::string expected;
    for (int round = 0; round < 20; ++round) {
      expected += "job " + std::to_string(job) + " round " + std::to_string(round) + "\n";
    }
    EXPECT_EQ(log_text(job), expected) << job;
  }
}

TEST_F(JobLogsTest, OpeningStartsAFreshFile) {
  m_temp.write("q.runner/logs/7.log", "left from a crashed run");
  JobLogs logs(m_dir);
  ASSERT_TRUE(logs.open(7));
  EXPECT_TRUE(logs.append(7, "new"));
  EXPECT_TRUE(logs.close(7));
  EXPECT_EQ(log_text(7), "new");
}

TEST_F(JobLogsTest, FailuresAreReported) {
  JobLogs logs(m_dir);
  Status unopened = logs.append(9, "no log");
  EXPECT_FALSE(unopened.ok());
  EXPECT_NE(unopened.message(), "");
  JobLogs nowhere(m_temp.file("missing.runner"));
  Status opened = nowhere.open(1);
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(opened.message().find("missing.runner/logs/1.log"), std::string::npos)
      << opened.message();
  // The job stays open: its output is counted as lost, and closing says so.
  EXPECT_EQ(nowhere.open_jobs(), 1u);
  EXPECT_FALSE(nowhere.append(1, std::string(64 * 1024, 'x')).ok());
  Status closed = nowhere.close(1);
  EXPECT_NE(closed.message().find("could not be created"), std::string::npos) << closed.message();
  EXPECT_EQ(nowhere.open_jobs(), 0u);
}

}  // namespace
}  // namespace runner
