// Job logs hold exactly the bytes each job wrote, whatever the number of
// jobs open at once.
#include "runner/state/job_log.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "runner/state/state_dir.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

class JobLogsTest : public ::testing::Test {
 protected:
  JobLogsTest() : m_dir(m_temp.file("q.runner")) { ensure_state_dir(m_dir); }
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

TEST_F(JobLogsTest, FlushMakesOutputVisibleWhileTheJobRuns) {
  JobLogs logs(m_dir);
  ASSERT_TRUE(logs.open(3));
  logs.append(3, "step 1\n");
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
          << logs.error();
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
  logs.append(7, "new");
  logs.close(7);
  EXPECT_EQ(log_text(7), "new");
}

TEST_F(JobLogsTest, FailuresAreReported) {
  JobLogs logs(m_dir);
  EXPECT_FALSE(logs.append(9, "no log"));
  EXPECT_NE(logs.error(), "");
  JobLogs nowhere(m_temp.file("missing.runner"));
  EXPECT_FALSE(nowhere.open(1));
  EXPECT_NE(nowhere.error().find("missing.runner/logs/1.log"), std::string::npos)
      << nowhere.error();
  EXPECT_EQ(nowhere.open_jobs(), 0u);
}

}  // namespace
}  // namespace runner
