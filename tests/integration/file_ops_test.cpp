// The file-system calls runner makes per job, counted by strace through
// bench/file_ops.py: counts do not vary with load, so a change that adds an
// open, a sync or a rename per job fails here, and one that drops the
// journal's sync before a job starts fails too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/process.h"
#include "support/small_tmpfs.h"

namespace runner {
namespace {

TEST(FileOps, EachJobStaysWithinItsBudgetOfFileSystemCallsAndIsSyncedBeforeItStarts) {
  if (testing::run_process({{"strace", "-V"}}).status != 0) {
    if (testing::setup_required()) FAIL() << "strace is missing, and CI=true requires it";
    GTEST_SKIP() << "no strace on this machine";
  }
  testing::ProcessSpec spec{{"python3", std::string(RUNNER_SOURCE_DIR) + "/bench/file_ops.py",
                             RUNNER_BINARY, "--check"}};
  spec.timeout = std::chrono::minutes(3);
  testing::ProcessResult r = testing::run_process(spec);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  nlohmann::json costs = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(costs.is_object()) << r.out;
  // What the counts must hold whatever the budget: the journal synced and
  // the queue replaced once per job, and the job's log opened.
  EXPECT_GE(costs.value("syncs", 0.0), 1.0) << r.out;
  EXPECT_EQ(costs.value("rename", 0.0), 1.0) << r.out;
  EXPECT_GE(costs.value("openat", 0.0), 1.0) << r.out;
}

}  // namespace
}  // namespace runner
