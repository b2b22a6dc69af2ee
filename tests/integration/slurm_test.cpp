// The real binary inside a real Slurm allocation (support/slurm_cluster.h:
// munged, slurmctld and three slurmd on this machine): `runner queue
// --slurm` run by `salloc`, every job a step of its own on its node.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "support/process.h"
#include "support/slurm_cluster.h"
#include "support/temp_dir.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

// `assignment` sets `cluster` (from `why_not`); skips the test, or fails
// it under CI=true, when there is none.
#define RUNNER_START_CLUSTER_OR_SKIP(assignment)    \
  do {                                              \
    std::string why_not;                            \
    assignment;                                     \
    RUNNER_REQUIRE_SLURM_CLUSTER(cluster, why_not); \
  } while (false)

// Every match of `pattern` in `text`, which must outlive them.
std::vector<std::smatch> matches(const std::string& text, const char* pattern) {
  std::regex regex(pattern);
  return {std::sregex_iterator(text.begin(), text.end(), regex), std::sregex_iterator()};
}

struct SlurmRun : ::testing::Test {
  testing::TempDir dir;
  std::unique_ptr<testing::SlurmCluster> cluster;

  // `salloc ARGS runner RUNNER_ARGS` in the test directory.
  testing::ProcessSpec in_allocation(std::vector<std::string> salloc_args,
                                     std::vector<std::string> runner_args) {
    testing::ProcessSpec spec = testing::runner_spec(std::move(runner_args), dir.path());
    salloc_args.insert(salloc_args.begin(), "/usr/bin/salloc");
    spec.args.insert(spec.args.begin(), salloc_args.begin(), salloc_args.end());
    for (const auto& [name, value] : cluster->env()) spec.env[name] = value;
    spec.timeout = 90s;
    return spec;
  }

  // `runner submit ARGS`; the Slurm job's id, or "" (with a failure added).
  std::string submit(std::vector<std::string> args) {
    args.insert(args.begin(), "submit");
    testing::ProcessSpec spec = testing::runner_spec(std::move(args), dir.path());
    for (const auto& [name, value] : cluster->env()) spec.env[name] = value;
    testing::ProcessResult submitted = testing::run_process(spec);
    std::smatch job;
    if (submitted.status == 0 &&
        std::regex_search(submitted.out, job, std::regex(R"(submitted Slurm job (\d+))")))
      return job[1];
    ADD_FAILURE() << submitted.out << submitted.err;
    return {};
  }

  // Whether `runner status`, run outside the allocation, comes to say
  // `text` within 10 s (a failure with what it said when it does not).
  void expect_status_to_say(const std::string& text, const std::string& slurm_job) {
    testing::ProcessResult status;
    EXPECT_TRUE(testing::wait_until(
        [&] {
          status = testing::run_process(testing::runner_spec({"status"}, dir.path()));
          return status.out.find(text) != std::string::npos;
        },
        10s))
        << "runner status from outside the allocation:\n"
        << status.out << status.err << dir.read("queue.runner/slurm-" + slurm_job + ".out");
  }

  // `queue` drained by `salloc -N2 --gres=gpu:2 --cpus-per-gpu=1 runner
  // queue --slurm` (a CPU per GPU, so that each step holds a GPU of its own).
  testing::ProcessResult drain(const std::string& queue,
                               std::vector<std::string> salloc_args = {"-N2", "--gres=gpu:2",
                                                                       "--cpus-per-gpu=1"}) {
    dir.write("queue.yaml", queue);
    return testing::run_process(
        in_allocation(std::move(salloc_args), {"queue", "--slurm", "--no-status"}));
  }
};

TEST_F(SlurmRun, ClusterAllocatesNodesWithTheirGpus) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  testing::ProcessResult result =
      cluster->run({"/usr/bin/salloc", "-N2", "--gres=gpu:2", "/usr/bin/srun", "--overlap", "-l",
                    "sh", "-c", "echo $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"});
  ASSERT_EQ(result.status, 0) << result.err << cluster->logs();
  EXPECT_NE(result.out.find("0: n1 0,1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("1: n2 0,1"), std::string::npos) << result.out;
}

TEST_F(SlurmRun, JobsThatWouldOutliveTheAllocationStayInTheQueue) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  // One slot, a minute: after two jobs of 20 s, a third would end too late.
  dir.write("queue.yaml", "- command: sleep 20; echo job <<i>> done\n  i: [1, 2, 3, 4]\n");
  testing::ProcessResult result = testing::run_process(in_allocation(
      {"-N1", "--gres=gpu:1", "--time=1"}, {"queue", "--slurm", "--no-status"}));
  ASSERT_EQ(result.status, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("job 2 done"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("job 3 done"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("sooner than another job would end (2 succeeded so far)"),
            std::string::npos)
      << result.err;
  EXPECT_NE(dir.read("queue.yaml").find("i: [3, 4]"), std::string::npos) << dir.read("queue.yaml");
}

TEST_F(SlurmRun, AHostsFileAddsParametersToTheNodesItNames) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  dir.write("hosts.yaml",
            "- hostname: n1\n  kind: fast\n  gpu: [7, 8]\n- hostname: elsewhere\n  kind: x\n");
  testing::ProcessResult result = drain(
      "- command: 'echo job <<i>> on $SLURMD_NODENAME gpu=<<gpu>> kind=<<kind>>'\n"
      "  i: [1, 2]\n  kind: unknown\n");
  ASSERT_EQ(result.status, 0) << result.out << result.err;
  // n1's slots take `kind` from hosts.yaml (its own `gpu` stays Slurm's);
  // n2 is not in it, so the job's value stands.
  EXPECT_TRUE(std::regex_search(result.out, std::regex(R"(job \d on n1 gpu=[01] kind=fast)")))
      << result.out;
  EXPECT_EQ(result.out.find("gpu=7"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("on n1 gpu=0 kind=unknown"), std::string::npos) << result.out;
}

TEST_F(SlurmRun, DryRunPrintsTheAllocationsFleet) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  dir.write("queue.yaml", "- echo <<gpu>>\n");
  testing::ProcessResult result = testing::run_process(
      in_allocation({"-N2", "--gres=gpu:2"}, {"queue", "--slurm", "--dry-run"}));
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("n1 (gpu=0, gpu=1), n2 (gpu=0, gpu=1)"), std::string::npos)
      << result.out;
}

TEST_F(SlurmRun, QueueDrainsOneStepPerJobEachHoldingAGpuOfItsOwn) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  // Two at once on a node: Slurm would make a step that asks for a GPU
  // another holds wait, so the two hold both of the node's GPUs.
  testing::ProcessResult result = drain(
      "- command: 'echo job <<i>> gpu=<<gpu>> node=$SLURMD_NODENAME step=$SLURM_STEP_ID "
      "step_gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES; sleep 1'\n"
      "  i: [1, 2, 3, 4, 5, 6, 7, 8]\n");
  ASSERT_EQ(result.status, 0) << result.out << result.err;
  std::set<std::string> jobs, slots, steps;
  std::map<std::string, std::set<std::string>> gpus_of_node;
  for (const std::smatch& job : matches(
           result.out, R"(job (\d) gpu=(\d) node=(n\d) step=(\d+) step_gpus=(\d) cuda=(\d))")) {
    jobs.insert(job[1]);
    slots.insert(job[3].str() + " gpu=" + job[2].str());
    steps.insert(job[4]);
    gpus_of_node[job[3]].insert(job[5]);
    EXPECT_EQ(job[6], job[5]) << "CUDA_VISIBLE_DEVICES is the step's GPU\n" << result.out;
  }
  EXPECT_EQ(jobs.size(), 8u) << result.out;
  EXPECT_EQ(slots, (std::set<std::string>{"n1 gpu=0", "n1 gpu=1", "n2 gpu=0", "n2 gpu=1"}))
      << result.out;
  EXPECT_EQ(steps.size(), 8u) << "every job a step of its own\n" << result.out;
  EXPECT_EQ(gpus_of_node, (std::map<std::string, std::set<std::string>>{{"n1", {"0", "1"}},
                                                                         {"n2", {"0", "1"}}}))
      << result.out;
  EXPECT_EQ(result.err.find("--cpus-per-gpu"), std::string::npos) << result.err;
}

TEST_F(SlurmRun, StepsShareTheNodesGpusWhereTheAllocationHasACpuForOne) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  testing::ProcessResult result = drain(
      "- command: 'echo job <<i>> gpu=<<gpu>> cuda=$CUDA_VISIBLE_DEVICES'\n  i: [1, 2]\n",
      {"-N1", "--gres=gpu:2"});
  ASSERT_EQ(result.status, 0) << result.out << result.err;
  EXPECT_NE(result.err.find("n1: the allocation holds 1 CPU there for 2 GPUs, so its steps share "
                            "the node and see all its GPUs"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(matches(result.out, R"(job \d gpu=[01] cuda=0,1)").size(), 2u) << result.out;
}

TEST_F(SlurmRun, SubmittedBatchJobDrainsJobsAddedWhileItRuns) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  dir.write("queue.yaml", "- echo first on $SLURMD_NODENAME gpu <<gpu>> > first.out\n");
  std::string job = submit({"--nodes", "2", "--gpus-per-node", "2", "--time", "5"});
  ASSERT_FALSE(job.empty());
  EXPECT_TRUE(testing::wait_until([&] { return !dir.read("first.out").empty(); }, 20s))
      << dir.read("queue.runner/slurm-" + job + ".out");
  EXPECT_EQ(dir.read("first.out"), "first on n1 gpu 0\n");

  testing::ProcessResult added =
      testing::run_process(testing::runner_spec({"add", "echo second > second.out"}, dir.path()));
  ASSERT_EQ(added.status, 0) << added.err;
  EXPECT_TRUE(testing::wait_until([&] { return !dir.read("second.out").empty(); }, 20s))
      << dir.read("queue.runner/slurm-" + job + ".out");
  expect_status_to_say("2 done (2 succeeded", job);
  EXPECT_EQ(cluster->run({"/usr/bin/scancel", job}).status, 0);
}

TEST_F(SlurmRun, RequeuedBatchJobRunsWhatItsFirstRunLeftUnfinished) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  dir.write("queue.yaml",
            "- command: echo start <<i>> >> starts.txt; sleep 6; echo end <<i>> >> ends.txt\n"
            "  i: [1, 2]\n");
  std::string job = submit({"--nodes", "1", "--gpus-per-node", "1", "--time", "5"});
  ASSERT_FALSE(job.empty());
  ASSERT_TRUE(testing::wait_until([&] { return !dir.read("starts.txt").empty(); }, 20s))
      << dir.read("queue.runner/slurm-" + job + ".out");
  // Slurm kills job 1's step and runner, and starts the batch script again.
  ASSERT_EQ(cluster->run({"/usr/bin/scontrol", "requeue", job}).status, 0) << cluster->logs();
  // The first run ends at once, its end in the journal (before KillWait's KILL).
  EXPECT_TRUE(testing::wait_until(
      [&] {
        return dir.read("queue.runner/journal.jsonl").find("\"event\":\"run_end\"") !=
               std::string::npos;
      },
      10s))
      << dir.read("queue.runner/journal.jsonl");
  EXPECT_TRUE(testing::wait_until([&] { return dir.read("ends.txt") == "end 1\nend 2\n"; }, 90s))
      << dir.read("starts.txt") << dir.read("ends.txt")
      << dir.read("queue.runner/journal.jsonl");
  EXPECT_EQ(dir.read("starts.txt"), "start 1\nstart 1\nstart 2\n");
  expect_status_to_say("2 done (2 succeeded", job);
  EXPECT_EQ(cluster->run({"/usr/bin/scancel", job}).status, 0);
}

// Jobs that wait in their step until the file `go` exists, then say so.
constexpr const char* k_jobs_waiting_for_go =
    "- command: echo start <<i>> >> starts.txt; while [ ! -e go ]; do sleep 0.2; done; "
    "echo end <<i>> >> ends.txt\n  i: [1, 2, 3]\n";

// `salloc` running `runner queue --slurm` on two one-GPU slots, ended by
// Slurm while its jobs run: the run ends within seconds, its jobs lost,
// and the next allocation's `--resume` runs them.
struct SlurmAllocationEnd : SlurmRun {
  // The id of the only Slurm job of the cluster, once there is one.
  std::string the_job() {
    std::string id;
    EXPECT_TRUE(testing::wait_until(
        [&] {
          id = cluster->run({"/usr/bin/squeue", "-h", "-o", "%i"}).out;
          while (!id.empty() && id.back() == '\n') id.pop_back();
          return !id.empty() && id.find('\n') == std::string::npos;
        },
        10s));
    return id;
  }

  // Starts the run, waits until both slots run a job, ends the allocation
  // with `end_it(job)`, and returns how the run ended and how long it took
  // after `end_it` returned.
  std::pair<testing::ProcessResult, std::chrono::steady_clock::duration> end_under_jobs(
      std::vector<std::string> salloc_args, const std::function<void(const std::string&)>& end_it) {
    dir.write("queue.yaml", k_jobs_waiting_for_go);
    testing::ProcessSpec spec =
        in_allocation(std::move(salloc_args), {"queue", "--slurm", "--no-status"});
    spec.timeout = 150s;
    testing::Process run(spec);
    EXPECT_TRUE(testing::wait_until([&] { return dir.read("starts.txt").size() == 16; }, 20s))
        << run.peek_err() << dir.read("starts.txt");
    end_it(the_job());
    auto ending = std::chrono::steady_clock::now();
    testing::ProcessResult result = run.wait();
    return {result, std::chrono::steady_clock::now() - ending};
  }

  // The run that `end_under_jobs` ended: within seconds, with status 1, no
  // job started since; then the jobs it left run in a new allocation with
  // `--resume`.
  void expect_ended_then_resumed(const testing::ProcessResult& result,
                                 std::chrono::steady_clock::duration took) {
    EXPECT_LT(took, 15s) << result.out << result.err;
    EXPECT_EQ(result.status, 1) << result.out << result.err;
    EXPECT_NE(result.err.find("lost: Slurm is ending allocation"), std::string::npos) << result.err;
    EXPECT_EQ(dir.read("starts.txt").size(), 16u) << "no job starts once it ends";
    dir.write("go", "");
    testing::ProcessSpec spec = in_allocation({"-N1", "--gres=gpu:2", "--cpus-per-gpu=1"},
                                              {"queue", "--slurm", "--no-status", "--resume"});
    testing::ProcessResult resumed = testing::run_process(spec);
    EXPECT_EQ(resumed.status, 0) << resumed.out << resumed.err;
    EXPECT_EQ(dir.read("ends.txt").size(), 18u) << resumed.out << resumed.err;
    for (const char* end : {"end 1\n", "end 2\n", "end 3\n"})
      EXPECT_NE(dir.read("ends.txt").find(end), std::string::npos) << dir.read("ends.txt");
  }
};

TEST_F(SlurmAllocationEnd, CancelledAllocationEndsTheRunAndResumeRunsItsJobs) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  auto [result, took] =
      end_under_jobs({"-N1", "--gres=gpu:2", "--cpus-per-gpu=1"}, [&](const std::string& job) {
        EXPECT_EQ(cluster->run({"/usr/bin/scancel", job}).status, 0);
      });
  expect_ended_then_resumed(result, took);
}

TEST_F(SlurmAllocationEnd, AllocationOutOfTimeEndsTheRunAndResumeRunsItsJobs) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  // A minute, Slurm's shortest; slurmctld looks at time limits every 30 s.
  auto [result, took] = end_under_jobs(
      {"-N1", "--gres=gpu:2", "--cpus-per-gpu=1", "--time=1"}, [&](const std::string& job) {
        EXPECT_TRUE(testing::wait_until(
            [&] {
              return cluster->run({"/usr/bin/squeue", "-h", "-j", job, "-o", "%T"}).out !=
                     "RUNNING\n";
            },
            100s));
      });
  expect_ended_then_resumed(result, took);
}

// runner in an allocation made beforehand (`salloc --no-shell`), so that
// the test signals runner itself.
struct SlurmAllocationRun : SlurmRun {
  std::string job_id;

  // The cluster and an allocation of two nodes with two GPUs each; nullptr
  // (with `why_not` set) when there is no cluster.
  std::unique_ptr<testing::SlurmCluster> allocate(std::string& why_not) {
    auto started = testing::SlurmCluster::start(dir, why_not);
    if (!started) return nullptr;
    job_id = started->allocate({"-N2", "--gres=gpu:2", "--cpus-per-gpu=1"});
    if (job_id.empty()) throw std::runtime_error("salloc failed:\n" + started->logs());
    return started;
  }

  std::unique_ptr<testing::Process> start(std::vector<std::string> args) {
    testing::ProcessSpec spec = testing::runner_spec(std::move(args), dir.path());
    for (const auto& [name, value] : cluster->env()) spec.env[name] = value;
    spec.env["SLURM_JOB_ID"] = job_id;
    spec.timeout = 60s;
    return std::make_unique<testing::Process>(spec);
  }
};

TEST_F(SlurmAllocationRun, TimeoutSendsTermToTheCommandInItsStep) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = allocate(why_not));
  dir.write(
      "queue.yaml",
      "- command: trap 'echo got TERM; kill $!; exit 3' TERM; echo started; sleep 300 & wait\n"
      "  timeout: 3s\n");
  testing::ProcessResult result = start({"queue", "--slurm", "--no-status"})->wait();
  EXPECT_NE(result.out.find("got TERM"), std::string::npos) << result.out << result.err;
  EXPECT_TRUE(cluster->runner_steps(job_id).empty());
}

TEST_F(SlurmAllocationRun, SecondInterruptLeavesNoStepRunning) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = allocate(why_not));
  dir.write("queue.yaml", "- command: echo started <<i>>; sleep 300\n  i: [1, 2, 3]\n");
  auto run = start({"queue", "--slurm", "--no-status"});
  ASSERT_TRUE(testing::wait_until([&] { return cluster->runner_steps(job_id).size() == 3; }, 10s))
      << run->peek_err();
  run->signal(SIGINT);
  EXPECT_TRUE(run->wait_for_output("interrupt again", 5s)) << run->peek_err();
  EXPECT_EQ(cluster->runner_steps(job_id).size(), 3u) << "the first interrupt stops nothing";
  run->signal(SIGINT);
  testing::ProcessResult result = run->wait();
  EXPECT_EQ(result.status, 130) << result.err;
  EXPECT_TRUE(testing::wait_until([&] { return cluster->runner_steps(job_id).empty(); }, 10s))
      << cluster->run({"/usr/bin/squeue", "-s"}).out;
}

TEST_F(SlurmAllocationRun, TaskWhoseStepIsCancelledIsReportedKilled) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = allocate(why_not));
  dir.write("queue.yaml", "- echo started; sleep 300\n");
  auto run = start({"queue", "--slurm", "--no-status"});
  ASSERT_TRUE(testing::wait_until([&] { return cluster->runner_steps(job_id).size() == 1; }, 10s))
      << run->peek_err();
  std::vector<std::string> steps = cluster->runner_steps(job_id);
  ASSERT_EQ(cluster->run({"/usr/bin/scancel", steps[0]}).status, 0);
  testing::ProcessResult result = run->wait();
  EXPECT_NE(result.status, 0);
  EXPECT_NE(result.out.find("killed by KILL"), std::string::npos) << result.out << result.err;
}

TEST_F(SlurmRun, GangJobRunsOneStepPerRankOnDifferentNodes) {
  RUNNER_START_CLUSTER_OR_SKIP(cluster = testing::SlurmCluster::start(dir, why_not));
  testing::ProcessResult result = drain(
      "- command: echo rank <<rank>> of <<nnodes>> on $SLURMD_NODENAME "
      "step=$SLURM_STEP_ID master=<<master_addr>> gpus=<<gpu>>\n  nodes: 2\n  slots: 2\n");
  ASSERT_EQ(result.status, 0) << result.out << result.err;
  std::set<std::string> ranks, nodes;
  for (const std::smatch& rank :
       matches(result.out, R"(rank (\d) of 2 on (n\d) step=(\d+) master=n1 gpus=0,1)")) {
    ranks.insert(rank[1]);
    nodes.insert(rank[2]);
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"})) << result.out;
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"})) << result.out;
}

}  // namespace
}  // namespace runner
