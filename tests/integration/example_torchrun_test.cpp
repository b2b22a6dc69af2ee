// examples/torchrun run exactly as its README says: data-parallel training
// with torchrun (gloo, on CPUs) across 2 nodes, first over SSH on two hosts
// that are network namespaces with their own sshd and address
// (support/netns_fleet.h), reached as a user of their shared home by the
// names node0 and node1 (RUNNER_SSH_CONFIG, as ~/.ssh/config would); then
// inside allocations of a real Slurm cluster of this machine
// (support/slurm_cluster.h): `salloc ... runner queue --slurm`, and
// `runner submit` whose batch job is requeued under its running jobs, which
// its next run takes up from their checkpoints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runner/state/journal.h"
#include "support/example.h"
#include "support/netns_fleet.h"
#include "support/remote_user.h"
#include "support/slurm_cluster.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/value_of.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::ProcessResult;

constexpr const char* k_torchrun = "/usr/bin/torchrun";

// Skips the test when torchrun is not installed, but fails it under CI=true
// (scripts/setup.sh installs python3-torch).
#define RUNNER_REQUIRE_TORCHRUN()                                                       \
  do {                                                                                  \
    if (::access(k_torchrun, X_OK) != 0) {                                              \
      if (::runner::testing::setup_required())                                          \
        FAIL() << "no " << k_torchrun << " (python3-torch), and CI=true requires it";   \
      GTEST_SKIP() << "no " << k_torchrun << " (install python3-torch)";                \
    }                                                                                   \
  } while (false)

const std::vector<std::string> k_readme_commands = {
    "runner push train.py",
    "cp queue.yaml ssh.yaml && runner queue --queue-file ssh.yaml",
    "runner results --queue-file ssh.yaml",
    "cp queue.yaml slurm.yaml && salloc -N2 --gres=gpu:2 --cpus-per-gpu=1 runner queue --slurm "
    "--queue-file slurm.yaml",
    "runner results --queue-file slurm.yaml",
    "cp queue.yaml submit.yaml && runner submit --queue-file submit.yaml --nodes 2 "
    "--gpus-per-node 2 --time 10",
    "scontrol requeue $(squeue -h -n runner -o %i)",
    "runner results --queue-file submit.yaml",
    "scancel -n runner",
};

struct TorchrunExample : ::testing::Test {
  testing::TempDir dir;
  testing::Example example{"torchrun"};
  std::string work;
  std::vector<std::string> commands;

  void SetUp() override {
    work = example.copy_into(dir);
    commands = example.commands();
  }

  // README's command `index`, which must exit with `status`.
  ProcessResult run(std::size_t index, const std::map<std::string, std::string>& env,
                    int status = 0) {
    ProcessResult ran = example.run(commands.at(index), work, env, 4min);
    EXPECT_EQ(ran.status, status) << commands[index] << "\n" << ran.out << ran.err;
    return ran;
  }

  // The records of `event` in the journal of the queue `queue`.yaml.
  std::vector<nlohmann::json> journal(const std::string& queue, const std::string& event) const {
    std::vector<nlohmann::json> found;
    for (auto& record :
         testing::value_of(read_journal(work + "/" + queue + ".runner/journal.jsonl")))
      if (record.value("event", "") == event) found.push_back(record);
    return found;
  }

  // Each of `queue`'s jobs started `starts` times, each time on two hosts
  // (a rank on each of `hosts`); its last attempt succeeded.
  void expect_each_job_ran(const std::string& queue, int starts,
                           const std::set<std::string>& hosts) const {
    std::map<JobId, int> started;
    for (const auto& start : journal(queue, "job_start")) {
      ++started[start["job"].get<JobId>()];
      std::set<std::string> ranks_on;
      for (const auto& task : start["tasks"]) ranks_on.insert(task["host"].get<std::string>());
      EXPECT_EQ(ranks_on, hosts) << start.dump();
    }
    EXPECT_EQ(started, (std::map<JobId, int>{{1, starts}, {2, starts}})) << queue;
  }

  // `runner results` of a queue: the two learning rates, each trained by 2
  // processes (world size 2) to a fitted line, rank 0 on `host`, the job
  // succeeded on its `attempts`-th attempt, having resumed from a
  // checkpoint when it is not its first; its result file came back.
  void expect_results(const ProcessResult& results, const std::string& queue,
                      const std::string& host, int attempts) const {
    EXPECT_EQ(results.out.substr(0, results.out.find('\n')),
              "id,lr,host,slot,outcome,exit,duration_s,attempts,world_size,final_loss,weight,"
              "bias,resumed_at,steps_per_second");
    std::set<std::string> rates;
    for (auto& row : testing::csv_rows(results.out)) {
      EXPECT_EQ(row.count("<malformed>"), 0u) << row["<malformed>"];
      rates.insert(row["lr"]);
      EXPECT_EQ(row["host"], host) << results.out;
      EXPECT_EQ(row["outcome"], "succeeded") << results.out;
      EXPECT_EQ(row["exit"], "0") << results.out;
      EXPECT_EQ(row["attempts"], std::to_string(attempts)) << results.out;
      EXPECT_EQ(row["world_size"], "2") << results.out;
      EXPECT_LT(std::stod(row["final_loss"]), 0.05) << results.out;
      EXPECT_NEAR(std::stod(row["weight"]), 3, 0.5) << results.out;
      EXPECT_NEAR(std::stod(row["bias"]), 1, 0.2) << results.out;
      if (attempts == 1)
        EXPECT_EQ(row["resumed_at"], "0") << results.out;
      else
        EXPECT_GT(std::stoi(row["resumed_at"]), 0) << "resumed from its checkpoint\n"
                                                    << results.out;
      EXPECT_GT(std::stod(row["steps_per_second"]), 0) << results.out;
      std::string attempt = attempts == 1 ? "" : ".attempt-" + std::to_string(attempts);
      std::string file = work + "/" + queue + ".runner/outputs/" + row["id"] + attempt +
                         "/0/results/lr" + row["lr"] + ".json";
      EXPECT_TRUE(std::filesystem::is_regular_file(file)) << file;
    }
    EXPECT_EQ(rates, (std::set<std::string>{"0.1", "0.02"})) << results.out;
  }
};

TEST_F(TorchrunExample, ReadmeCommandsAreTheTestedOnes) {
  EXPECT_EQ(commands, k_readme_commands);
}

TEST_F(TorchrunExample, DataParallelTrainingAcrossTwoNodesOverSshAsTheReadmeSays) {
  ASSERT_EQ(commands, k_readme_commands);
  RUNNER_REQUIRE_TORCHRUN();
  std::string why_not;
  std::unique_ptr<testing::NetnsFleet> fleet = testing::NetnsFleet::start(dir, 2, why_not);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  std::unique_ptr<testing::RemoteUser> user = testing::RemoteUser::create("/bin/bash");
  RUNNER_REQUIRE_REMOTE_USER(user, "/bin/bash");
  std::map<std::string, std::string> env = fleet->admit(*user);

  ProcessResult pushed = run(0, env);
  EXPECT_NE(pushed.out.find("pushed to 2 of 2 hosts"), std::string::npos) << pushed.out;
  EXPECT_EQ(testing::sh_output("cat " + user->home() + "/train.py"), example.file("train.py"));

  ProcessResult trained = run(1, env);
  EXPECT_EQ(testing::count(trained.out, "done: world size 2"), 2) << trained.out;
  expect_each_job_ran("ssh", 1, {"node0", "node1"});
  expect_results(run(2, env), "ssh", "node0", 1);
}

TEST_F(TorchrunExample, DataParallelTrainingInSlurmAllocationsAndARequeueAsTheReadmeSays) {
  ASSERT_EQ(commands, k_readme_commands);
  RUNNER_REQUIRE_TORCHRUN();
  std::string why_not;
  std::unique_ptr<testing::SlurmCluster> cluster = testing::SlurmCluster::start(dir, why_not);
  RUNNER_REQUIRE_SLURM_CLUSTER(cluster, why_not);
  std::map<std::string, std::string> env = cluster->env();

  // salloc: the same queue, each rank a step on a node of its own.
  ProcessResult trained = run(3, env);
  EXPECT_EQ(testing::count(trained.out, "done: world size 2"), 2) << trained.out;
  expect_each_job_ran("slurm", 1, {"n1", "n2"});
  expect_results(run(4, env), "slurm", "n1", 1);

  // runner submit: requeued once both jobs train, its run ends within
  // seconds; the requeued one runs the two lost jobs from their checkpoints.
  ProcessResult submitted = run(5, env);
  EXPECT_NE(submitted.out.find("submitted Slurm job"), std::string::npos) << submitted.out;
  auto slurm_output = [&] {
    return testing::sh_output("cat " + work + "/submit.runner/slurm-*.out");
  };
  ASSERT_TRUE(testing::wait_until(
      [&] {
        return std::filesystem::exists(work + "/checkpoints/lr0.1.pt") &&
               std::filesystem::exists(work + "/checkpoints/lr0.02.pt");
      },
      3min))
      << slurm_output();
  run(6, env);
  auto requeued = std::chrono::steady_clock::now();
  ASSERT_TRUE(testing::wait_until([&] { return !journal("submit", "run_end").empty(); }, 30s))
      << slurm_output();
  EXPECT_LT(std::chrono::steady_clock::now() - requeued, 15s) << slurm_output();
  EXPECT_EQ(journal("submit", "run_end")[0]["status"], "interrupted") << slurm_output();
  std::vector<nlohmann::json> lost = journal("submit", "job_end");
  ASSERT_EQ(lost.size(), 2u) << slurm_output();
  for (const auto& end : lost) EXPECT_TRUE(end["lost"].get<bool>()) << end.dump();
  // Done, and rank 0's files of the second attempts back (after their end).
  auto second_attempts_back = [&] {
    int back = 0;
    for (const auto& outputs : journal("submit", "outputs"))
      back += outputs["attempt"] == 2 && outputs["rank"] == 0 && !outputs["files"].empty();
    return back == 2;
  };
  ASSERT_TRUE(testing::wait_until(second_attempts_back, 4min)) << slurm_output();
  EXPECT_EQ(journal("submit", "job_end").size(), 4u) << slurm_output();
  expect_each_job_ran("submit", 2, {"n1", "n2"});
  expect_results(run(7, env), "submit", "n1", 2);
  run(8, env);
}

}  // namespace
}  // namespace runner
