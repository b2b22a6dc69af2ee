// What the journal holds of the scheduler's jobs: a job_start names its task's
// host, slots and command, and a job that spans hosts each rank's; an
// outputs record's problem puts the fetch's error first.
#include "runner/sched/job_records.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::make_fleet;

Task task_on(int host, std::vector<int> slots, const std::string& command, int rank = 0) {
  Task task;
  task.host = host;
  task.slots = std::move(slots);
  task.command = command;
  task.rank = rank;
  return task;
}

TEST(JobRecords, AJobTakenAheadKeepsWhatItTakesToRunIt) {
  Job ahead;
  ahead.id = 9;
  ahead.spec.command = "train <<lr>>";
  ahead.spec.params = {{"lr", "0.1"}};
  ahead.spec.line = 7;
  ahead.spec.retries = 2;
  ahead.spec.slots = 2;

  JobTakenAheadRecord taken = job_taken_ahead_record(ahead);
  EXPECT_EQ(taken.job, 9);
  EXPECT_EQ(taken.template_command, "train <<lr>>");
  EXPECT_EQ(taken.params, ahead.spec.params);
  EXPECT_EQ(taken.line, 7);
  EXPECT_EQ(taken.retries, 2);
  EXPECT_EQ(taken.slots_needed, 2);
}

TEST(JobRecords, AJobStartNamesItsSlotHostCommandAndSpec) {
  Fleet fleet = make_fleet({{"a", {"0", "1"}}});
  Job job;
  job.id = 7;
  job.attempt = 2;
  job.spec.command = "train --lr <<lr>>";
  job.spec.params = {{"lr", "0.1"}};
  job.spec.retries = 1;
  job.tasks.push_back(task_on(0, {1}, "train --lr 0.1"));

  JobStartRecord record = job_start_record(fleet, job);
  EXPECT_EQ(record.job, 7);
  EXPECT_EQ(record.host, "a");
  EXPECT_EQ(record.slot, fleet.slots[1].label);
  EXPECT_EQ(record.slot_indices, std::vector<int>{1});
  EXPECT_EQ(record.command, "train --lr 0.1");
  EXPECT_EQ(record.template_command, "train --lr <<lr>>");
  EXPECT_EQ(record.params, (Params{{"lr", "0.1"}}));
  EXPECT_EQ(record.retries, 1);
  EXPECT_EQ(record.attempt, 2);
  EXPECT_FALSE(record.nodes);
  EXPECT_TRUE(record.tasks.empty());
  EXPECT_EQ(recorded_rank(job, job.tasks[0]), std::nullopt);
}

TEST(JobRecords, AJobThatSpansHostsListsEveryRank) {
  Fleet fleet = make_fleet({{"a", {"0"}}, {"b", {"0"}}});
  Job job;
  job.id = 3;
  job.layout = NodeLayout{};
  job.tasks.push_back(task_on(0, {0}, "rank0", 0));
  job.tasks.push_back(task_on(1, {1}, "rank1", 1));

  JobStartRecord record = job_start_record(fleet, job);
  EXPECT_EQ(record.nodes, 2);
  ASSERT_EQ(record.tasks.size(), 2u);
  EXPECT_EQ(record.tasks[1].host, "b");
  EXPECT_EQ(record.tasks[1].command, "rank1");
  EXPECT_EQ(record.tasks[1].slot_indices, std::vector<int>{0});
  EXPECT_EQ(recorded_rank(job, job.tasks[1]), 1);
}

TEST(JobRecords, AnOutputsProblemIsTheErrorThenWhatWasNotWrittenThenWhatWasRefused) {
  FetchedFiles fetched;
  EXPECT_EQ(outputs_problem(fetched), "");
  fetched.unwritten = {"big.bin: No space left on device"};
  fetched.refused = {"x: a symbolic link"};
  EXPECT_EQ(outputs_problem(fetched), "big.bin: No space left on device; x: a symbolic link");
  fetched.error = "the stream ended early";
  EXPECT_EQ(outputs_problem(fetched),
            "the stream ended early; big.bin: No space left on device; x: a symbolic link");
}

}  // namespace
}  // namespace runner
