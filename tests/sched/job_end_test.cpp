// What a job's end means: every way a job ends, in both modes, against the
// limits that decide whether it runs again.
#include "runner/sched/job_end.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

// A running job of one task on slot 3, on its `attempt`.
Job running_job(int attempt = 1) {
  Job job;
  job.id = 7;
  job.spec = JobSpec{"train", {}, 1, 1};
  job.attempt = attempt;
  job.tasks.push_back(Task{.id = 70, .host = 1, .slots = {3}, .label = "b gpu=3"});
  job.state = Running{};
  return job;
}

const JobExit k_failed = JobExit::exited(1);
const JobExit k_lost = JobExit::lost_because("connection lost");
const JobExit k_not_started = JobExit::not_started_because("login shell failed");

TEST(JobEnd, ASuccessIsDone) {
  JobEnd end = judge_end(running_job(), JobExit::exited(0), EndRules{});
  EXPECT_TRUE(end.exit.succeeded());
  EXPECT_FALSE(end.again);
  EXPECT_FALSE(end.failed());
}

TEST(JobEnd, AFailureWithoutRetriesFails) {
  JobEnd end = judge_end(running_job(), k_failed, EndRules{});
  EXPECT_FALSE(end.again);
  EXPECT_TRUE(end.failed());
}

TEST(JobEnd, AFailureWithRetriesLeftRunsAgainAvoidingItsSlot) {
  Job job = running_job();
  job.spec.retries = 2;
  job.retries_used = 1;
  JobEnd end = judge_end(job, k_failed, EndRules{});
  ASSERT_TRUE(end.again);
  EXPECT_EQ(end.again->attempt, 2);
  EXPECT_EQ(end.again->retries_used, 2);
  EXPECT_TRUE(end.again->tasks.empty());
  EXPECT_EQ(std::get<Queued>(end.again->state).avoid_slot, 3);
  EXPECT_FALSE(end.failed());
  job.retries_used = 2;
  EXPECT_TRUE(judge_end(job, k_failed, EndRules{}).failed()) << "its retries are used up";
}

TEST(JobEnd, TheDefaultRetriesApplyToAJobThatSaysNone) {
  EXPECT_TRUE(judge_end(running_job(), k_failed, EndRules{.default_retries = 1}).again);
}

TEST(JobEnd, ALostJobGoesBackUntilItWasLostTooOften) {
  Job job = running_job(2);
  job.requeues = 1;
  JobEnd end = judge_end(job, k_lost, EndRules{.max_requeue = 2});
  ASSERT_TRUE(end.again);
  EXPECT_EQ(end.again->requeues, 2);
  EXPECT_EQ(end.again->attempt, 3);
  EXPECT_EQ(std::get<Queued>(end.again->state).avoid_slot, -1) << "its host went, not its slot";
  job.requeues = 2;
  EXPECT_TRUE(judge_end(job, k_lost, EndRules{.max_requeue = 2}).failed());
}

TEST(JobEnd, AJobThatDidNotStartGoesBackAsTheSameAttemptUntilEveryHostRefusedIt) {
  Job job = running_job(1);
  JobEnd end = judge_end(job, k_not_started, EndRules{.hosts = 2});
  ASSERT_TRUE(end.again);
  EXPECT_EQ(end.again->attempt, 1);
  EXPECT_EQ(end.again->start_failures, 1);
  job.start_failures = 2;
  end = judge_end(job, k_not_started, EndRules{.hosts = 2});
  EXPECT_TRUE(end.failed());
  EXPECT_EQ(end.exit.error(), "login shell failed (it could not start 3 times; not tried again)");
}

TEST(JobEnd, ATimeoutCountsAsAFailureAndAnInterruptNeverRunsAgain) {
  Job job = running_job();
  job.running().timed_out = true;
  JobEnd end = judge_end(job, JobExit::killed("TERM"), EndRules{});
  EXPECT_TRUE(end.exit.timed_out);
  EXPECT_TRUE(end.failed());
  job.spec.retries = 1;
  EXPECT_TRUE(judge_end(job, JobExit::killed("TERM"), EndRules{}).again)
      << "a job that timed out is retried if it has retries left";

  job.running().cancelled = true;  // an interrupt during its timeout's stop
  end = judge_end(job, JobExit::killed("TERM"), EndRules{});
  EXPECT_TRUE(end.exit.cancelled);
  EXPECT_FALSE(end.exit.timed_out) << "cancelled wins";
  EXPECT_FALSE(end.again);
}

TEST(JobEnd, BroadcastStepsAndFailuresOfAStoppingRunNeverRunAgain) {
  Job job = running_job();
  job.spec.retries = 3;
  for (const JobExit& exit : {k_failed, k_lost, k_not_started}) {
    EXPECT_FALSE(judge_end(job, exit, EndRules{.mode = Mode::broadcast}).again) << exit.error();
    EXPECT_TRUE(judge_end(job, exit, EndRules{.mode = Mode::broadcast}).failed());
  }
  EXPECT_FALSE(judge_end(job, k_failed, EndRules{.stopping = true}).again);
}

TEST(JobEnd, AJobLostWhileTheRunStopsWaitsForTheNextRun) {
  // Its outcome is unknown (its host, or its Slurm allocation, went away):
  // it goes back, to be run by `--resume`, and is not a failure.
  JobEnd end = judge_end(running_job(), k_lost, EndRules{.stopping = true});
  ASSERT_TRUE(end.again);
  EXPECT_EQ(end.again->requeues, 1);
  EXPECT_FALSE(end.failed());
  // Unless the runner stopped it on an interrupt.
  Job cancelled = running_job();
  std::get<Running>(cancelled.state).cancelled = true;
  EXPECT_FALSE(judge_end(cancelled, k_lost, EndRules{.stopping = true}).again);
}

TEST(JobEnd, AJobLostAsItsAllocationEndsGoesBackWithoutCountingTowardItsRequeues) {
  // Losing it is not the job's fault: however often allocations end under
  // it, it runs again in the next run.
  Job job = running_job(3);
  job.requeues = 2;
  JobEnd end = judge_end(job, k_lost, EndRules{.max_requeue = 2, .stopping = true,
                                               .allocation_ending = true});
  ASSERT_TRUE(end.again);
  EXPECT_FALSE(end.failed());
  EXPECT_EQ(end.again->requeues, 2);
  EXPECT_EQ(end.again->attempt, 4) << "its files come back apart from the lost attempt's";
}

// A job of ranks whose tasks ended as `exits`.
Job ranks_ended(const std::vector<JobExit>& exits) {
  Job job = running_job();
  job.tasks.clear();
  for (std::size_t rank = 0; rank < exits.size(); ++rank)
    job.tasks.push_back(Task{.id = 70 + rank, .rank = static_cast<int>(rank), .exit = exits[rank]});
  return job;
}

TEST(JobEnd, AJobOfRanksEndsAsTheRankThatFailedFirst) {
  Job job = ranks_ended({JobExit::exited(143), k_lost, JobExit::exited(143)});
  job.running().failed_rank = 1;
  EXPECT_TRUE(exit_of_tasks(job).lost());
}

TEST(JobEnd, AJobOfRanksWithoutAFirstFailureEndsAsTheFirstThatDidNotSucceed) {
  EXPECT_EQ(exit_of_tasks(ranks_ended({JobExit::exited(0), JobExit::exited(2), k_failed})).code(),
            2);
  EXPECT_TRUE(exit_of_tasks(ranks_ended({JobExit::exited(0), JobExit::exited(0)})).succeeded());
}

}  // namespace
}  // namespace runner
