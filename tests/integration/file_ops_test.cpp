// The file-system calls runner makes per job, counted by strace through
// bench/file_ops.py (a run) and bench/results_ops.py (`runner results` and
// `report` of jobs that brought files back): counts do not vary with load,
// so a change that adds an open, a sync, a rename or a look per job fails
// here, and one that drops the journal's sync before a job starts fails too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/process.h"
#include "support/small_tmpfs.h"

namespace runner {
namespace {

// The costs per job that `script` (in bench/) printed, checked against its
// budget; a test failure when it found one broken.
nlohmann::json checked_costs(const std::string& script) {
  if (testing::run_process({{"strace", "-V"}}).status != 0) {
    if (testing::setup_required()) ADD_FAILURE() << "strace is missing, and CI=true requires it";
    return nullptr;
  }
  testing::ProcessSpec spec{
      {"python3", std::string(RUNNER_SOURCE_DIR) + "/bench/" + script, RUNNER_BINARY, "--check"}};
  spec.timeout = std::chrono::minutes(3);
  testing::ProcessResult r = testing::run_process(spec);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  nlohmann::json costs = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(costs.is_object()) << r.out;
  return costs.is_object() ? costs : nullptr;
}

TEST(FileOps, EachJobStaysWithinItsBudgetOfFileSystemCallsAndIsSyncedBeforeItStarts) {
  nlohmann::json costs = checked_costs("file_ops.py");
  if (costs.is_null()) GTEST_SKIP() << "no strace on this machine, or no costs";
  // What the counts must hold whatever the budget: the journal synced and
  // the queue replaced once per job, and the job's log opened.
  EXPECT_GE(costs.value("syncs", 0.0), 1.0) << costs;
  EXPECT_EQ(costs.value("rename", 0.0), 1.0) << costs;
  EXPECT_GE(costs.value("openat", 0.0), 1.0) << costs;
}

TEST(ResultsOps, EachJobWithOutputsStaysWithinItsBudgetOfFileSystemCalls) {
  nlohmann::json costs = checked_costs("results_ops.py");
  if (costs.is_null()) GTEST_SKIP() << "no strace on this machine, or no costs";
  // What the counts must hold whatever the budget: each job's result file
  // and its log are read.
  for (const char* command : {"results", "report"})
    EXPECT_GE(costs[command].value("openat", 0.0), 2.0) << costs;
}

}  // namespace
}  // namespace runner
