// What the run's journal holds of the scheduler's jobs: the records made
// from a Job, a Task or what a fetch brought back, for its RunLog.
#pragma once

#include <optional>
#include <string>

#include "runner/config/hosts.h"
#include "runner/exec/host_ops.h"
#include "runner/sched/job.h"
#include "runner/state/journal_records.h"

namespace runner {

// What the journal keeps of a job as the queue gave it, and the job again
// from what it kept (without `nodes:`, which each record keeps its way).
RecordedJobKeys recorded_keys(const JobSpec& spec);
JobSpec spec_from(const RecordedJobKeys& keys);
// A job taken out of the queue file ahead of need: what it takes to run it.
JobTakenAheadRecord job_taken_ahead_record(const Job& job);
// A launched job's job_start: rank 0's task, and every rank's of a job that
// spans hosts.
JobStartRecord job_start_record(const Fleet& fleet, const Job& job);
// The rank a task's records name: only the tasks of a job that spans hosts
// have one.
std::optional<int> recorded_rank(const Job& job, const Task& task);
// Why outputs did not all come back, in one line: the fetch's error, what
// could not be written here, what was refused ("" when nothing).
std::string outputs_problem(const FetchedFiles& fetched);

}  // namespace runner
