// The running jobs on their own: the ids their tasks are given, a job found
// by each of its tasks, the jobs launched and not yet sent handed out once
// in launch order, and a job's end taking it and its tasks out.
#include "runner/sched/running_jobs.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

// Job `id` with `tasks` tasks, as launched (their ids not given yet).
Job launched(JobId id, int tasks) {
  Job job;
  job.id = id;
  job.spec.command = "train";
  for (int rank = 0; rank < tasks; ++rank) {
    Task task;
    task.rank = rank;
    job.tasks.push_back(task);
  }
  job.state = Running{};
  return job;
}

std::vector<TaskId> task_ids(const Job& job) {
  std::vector<TaskId> ids;
  for (const Task& task : job.tasks) ids.push_back(task.id);
  return ids;
}

TEST(RunningJobs, TasksGetIdsFromOneInLaunchOrder) {
  RunningJobs running;
  EXPECT_EQ(task_ids(running.add(launched(7, 2))), (std::vector<TaskId>{1, 2}));
  EXPECT_EQ(task_ids(running.add(launched(3, 1))), (std::vector<TaskId>{3}));
  EXPECT_EQ(task_ids(running.at(7)), (std::vector<TaskId>{1, 2}));
  EXPECT_EQ(running.size(), 2u);
}

TEST(RunningJobs, AJobIsFoundByEachOfItsTasks) {
  RunningJobs running;
  running.add(launched(7, 2));
  running.add(launched(3, 1));
  auto [job, task] = running.job_of_task(2);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->id, JobId{7});
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->rank, 1);
  EXPECT_EQ(running.job_of_task(3).first->id, JobId{3});
  auto [none, no_task] = running.job_of_task(4);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(no_task, nullptr);
}

TEST(RunningJobs, JobsNotSentYetAreHandedOutOnceInLaunchOrder) {
  RunningJobs running;
  EXPECT_FALSE(running.any_unsent());
  running.add(launched(7, 1));
  running.add(launched(3, 1));
  EXPECT_TRUE(running.any_unsent());
  EXPECT_EQ(running.take_unsent(), (std::vector<JobId>{7, 3}));
  EXPECT_FALSE(running.any_unsent());
  EXPECT_TRUE(running.take_unsent().empty());
  EXPECT_EQ(running.size(), 2u) << "sent, they still run";
}

TEST(RunningJobs, AJobNeverToBeSentIsNotHandedOut) {
  RunningJobs running;
  running.add(launched(7, 1));
  running.add(launched(3, 1));
  running.never_send(7);
  EXPECT_EQ(running.take_unsent(), (std::vector<JobId>{3}));
}

TEST(RunningJobs, AnEndedJobLeavesWithItsTasksAndTheirIdsAreNotGivenAgain) {
  RunningJobs running;
  running.add(launched(7, 2));
  running.add(launched(3, 1));
  std::optional<Job> ended = running.remove(7);
  ASSERT_TRUE(ended);
  EXPECT_EQ(task_ids(*ended), (std::vector<TaskId>{1, 2}));
  EXPECT_EQ(running.size(), 1u);
  EXPECT_EQ(running.find(7), nullptr);
  EXPECT_EQ(running.job_of_task(1).first, nullptr);
  EXPECT_EQ(running.job_of_task(2).first, nullptr);
  EXPECT_FALSE(running.remove(7)) << "it runs no more";
  EXPECT_EQ(task_ids(running.add(launched(9, 1))), (std::vector<TaskId>{4}));
}

TEST(RunningJobs, TheyAreSeenInTheOrderOfTheirIds) {
  RunningJobs running;
  EXPECT_TRUE(running.empty());
  running.add(launched(7, 1));
  running.add(launched(3, 1));
  std::vector<JobId> ids;
  for (const auto& [id, job] : running) ids.push_back(id);
  EXPECT_EQ(ids, (std::vector<JobId>{3, 7}));
  ASSERT_NE(running.find(3), nullptr);
  EXPECT_EQ(running.find(3)->id, JobId{3});
}

}  // namespace
}  // namespace runner
