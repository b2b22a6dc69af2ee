// The real binary: a job that spans hosts reads back as one job with a task
// per rank in `runner log`, `runner status` and `runner report`.
#include <gtest/gtest.h>

#include <string>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

TEST(GangView, LogStatusAndReportShowOneJobWithItsRanks) {
  testing::TempDir dir;
  testing::LoopbackFleet fleet{dir};
  if (!fleet.start(2)) {
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  fleet.write_hosts(1);
  dir.write("q.yaml",
            "- command: 'echo hello from <<rank>>; if [ <<rank>> = 1 ]; then sleep 1; exit 3; "
            "fi; sleep 30'\n"
            "  nodes: 2\n");
  testing::ProcessResult run =
      testing::run_process(fleet.runner({"queue", "--no-status", "--queue-file", "q.yaml"}));
  ASSERT_NE(run.status, 0) << run.out << run.err;

  std::string rank0 = "[rank 0 " + fleet.name(0) + "] ";
  std::string rank1 = "[rank 1 " + fleet.name(1) + "] ";
  testing::ProcessResult log = testing::run_process(
      testing::runner_spec({"log", "--queue-file", "q.yaml", "1"}, dir.path()));
  EXPECT_EQ(log.out, rank0 + "hello from 0\n" + rank1 + "hello from 1\n") << log.err;
  testing::ProcessResult one = testing::run_process(
      testing::runner_spec({"log", "--queue-file", "q.yaml", "--rank", "1", "1"}, dir.path()));
  EXPECT_EQ(one.out, "hello from 1\n") << one.err;

  testing::ProcessResult status =
      testing::run_process(testing::runner_spec({"status", "--queue-file", "q.yaml"}, dir.path()));
  std::string nodes = "2 nodes: " + fleet.name(0) + ", " + fleet.name(1);
  EXPECT_NE(status.out.find("#1 [" + nodes + "] rank 1: exit 3 after "), std::string::npos)
      << status.out << status.err;
  EXPECT_NE(status.out.find("log: q.runner/logs/1.1.log"), std::string::npos) << status.out;

  testing::ProcessResult report = testing::run_process(
      testing::runner_spec({"report", "--queue-file", "q.yaml", "--output", "-"}, dir.path()));
  EXPECT_EQ(testing::count(report.out, "data-job=\"1\" data-rank=\"0\""), 1) << report.err;
  EXPECT_EQ(testing::count(report.out, "data-job=\"1\" data-rank=\"1\""), 1);
}

}  // namespace
}  // namespace runner
