// `runner submit` to the real Slurm cluster of this machine
// (support/slurm_cluster.h) with a state directory whose path sbatch must
// read from the script's #SBATCH --output line as one name: blanks, a `#`
// and a `%` in it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>

#include "support/process.h"
#include "support/slurm_cluster.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

TEST(SlurmSubmit, AStateDirectoryWithBlanksHashesAndPercentsHoldsTheBatchJobsOutput) {
  testing::TempDir dir;
  std::string why_not;
  std::unique_ptr<testing::SlurmCluster> cluster = testing::SlurmCluster::start(dir, why_not);
  RUNNER_REQUIRE_SLURM_CLUSTER(cluster, why_not);
  dir.write("queue.yaml", "- echo ran > ran.out\n");
  std::string state = dir.path() + "/my runs #1 at 100%j";
  testing::ProcessSpec spec = testing::runner_spec(
      {"submit", "--state-dir", state, "--nodes", "1", "--gpus-per-node", "1", "--time", "5"},
      dir.path());
  for (const auto& [name, value] : cluster->env()) spec.env[name] = value;
  testing::ProcessResult submitted = testing::run_process(spec);
  std::smatch job;
  ASSERT_TRUE(submitted.status == 0 &&
              std::regex_search(submitted.out, job, std::regex(R"(submitted Slurm job (\d+))")))
      << submitted.out << submitted.err;
  std::string output = state + "/slurm-" + job[1].str() + ".out";
  EXPECT_TRUE(testing::wait_until([&] { return dir.read("ran.out") == "ran\n"; }, 30s))
      << cluster->logs();
  EXPECT_TRUE(std::filesystem::exists(output))
      << "the batch job's output is in the state directory:\n"
      << testing::sh_output("find " + dir.path() + " -name 'slurm-*'") << "\n"
      << cluster->run({"/usr/bin/scontrol", "show", "job", job[1].str()}).out;
  EXPECT_EQ(cluster->run({"/usr/bin/scancel", job[1].str()}).status, 0);
}

}  // namespace
}  // namespace runner
