// The real binary inside a real Slurm allocation (support/slurm_cluster.h:
// munged, slurmctld and three slurmd on this machine): `runner queue
// --slurm` run by `salloc`, every job a step of its own on its node.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <regex>
#include <set>
#include <string>

#include "support/process.h"
#include "support/slurm_cluster.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

struct SlurmRun : ::testing::Test {
  testing::TempDir dir;

  // `salloc ARGS runner RUNNER_ARGS` in the test directory.
  testing::ProcessSpec in_allocation(const testing::SlurmCluster& cluster,
                                     std::vector<std::string> salloc_args,
                                     std::vector<std::string> runner_args) {
    testing::ProcessSpec spec = testing::runner_spec(std::move(runner_args), dir.path());
    salloc_args.insert(salloc_args.begin(), "/usr/bin/salloc");
    spec.args.insert(spec.args.begin(), salloc_args.begin(), salloc_args.end());
    for (const auto& [name, value] : cluster.env()) spec.env[name] = value;
    spec.timeout = 90s;
    return spec;
  }
};

TEST_F(SlurmRun, ClusterAllocatesNodesWithTheirGpus) {
  std::string why_not;
  auto cluster = testing::SlurmCluster::start(dir, why_not);
  RUNNER_REQUIRE_SLURM_CLUSTER(cluster, why_not);
  testing::ProcessResult result = cluster->run(
      {"/usr/bin/salloc", "-N2", "--gres=gpu:2", "/usr/bin/srun", "--overlap", "-l", "sh", "-c",
       "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"});
  ASSERT_EQ(result.status, 0) << result.err << cluster->logs();
  EXPECT_NE(result.out.find("0: n1 0,1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("1: n2 0,1"), std::string::npos) << result.out;
}

TEST_F(SlurmRun, DryRunPrintsTheAllocationsFleet) {
  std::string why_not;
  auto cluster = testing::SlurmCluster::start(dir, why_not);
  RUNNER_REQUIRE_SLURM_CLUSTER(cluster, why_not);
  dir.write("queue.yaml", "- echo <<gpu>>\n");
  testing::ProcessResult result = testing::run_process(
      in_allocation(*cluster, {"-N2", "--gres=gpu:2"}, {"queue", "--slurm", "--dry-run"}));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("n1 (gpu=0, gpu=1), n2 (gpu=0, gpu=1)"), std::string::npos)
      << result.out;
}

TEST_F(SlurmRun, QueueDrainsOneStepPerJobOnItsNodesGpu) {
  std::string why_not;
  auto cluster = testing::SlurmCluster::start(dir, why_not);
  RUNNER_REQUIRE_SLURM_CLUSTER(cluster, why_not);
  dir.write("queue.yaml",
            "- command: 'echo job <<i>> gpu=<<gpu>> node=$SLURMD_NODENAME "
            "step=$SLURM_STEP_ID; sleep 1'\n  i: [1, 2, 3, 4, 5, 6, 7, 8]\n");
  testing::ProcessResult result = testing::run_process(
      in_allocation(*cluster, {"-N2", "--gres=gpu:2"}, {"queue", "--slurm", "--no-status"}));
  ASSERT_EQ(result.status, 0) << result.out << result.err;
  std::regex line(R"(job (\d) gpu=(\d) node=(n\d) step=(\d+))");
  std::set<std::string> jobs, slots, steps;
  for (std::sregex_iterator it(result.out.begin(), result.out.end(), line), end; it != end;
       ++it) {
    jobs.insert((*it)[1]);
    slots.insert((*it)[3].str() + " gpu=" + (*it)[2].str());
    steps.insert((*it)[4]);
  }
  EXPECT_EQ(jobs.size(), 8u) << result.out;
  EXPECT_EQ(slots, (std::set<std::string>{"n1 gpu=0", "n1 gpu=1", "n2 gpu=0", "n2 gpu=1"}))
      << result.out;
  EXPECT_EQ(steps.size(), 8u) << "every job a step of its own\n" << result.out;
}

}  // namespace
}  // namespace runner
