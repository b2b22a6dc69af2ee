// What the scheduler reports about a run, for the terminal, the job logs and
// the status line. The scheduler decides, and writes what it decided to its
// RunLog (state/run_log.h) before it acts on it; observers only show.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/queue_entry.h"
#include "runner/core/status.h"
#include "runner/exec/host_ops.h"
#include "runner/sched/job.h"

namespace runner {

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void host_ready(const Host& host) = 0;
  // No job will run on the host again in this run.
  virtual void host_failed(const Host& host, const Status& error) = 0;
  // The host was lost; the scheduler connects again after `wait`, and no
  // job starts there meanwhile.
  virtual void host_reconnecting(const Host& host, const Status& error, Clock::duration wait) = 0;
  // The job has its slots; its tasks' commands go to their hosts once the
  // run log's sync holds this.
  virtual void job_launched(const Job& job) = 0;
  // One of its tasks' processes started: `task.group` is known.
  virtual void task_started(const Job& job, const Task& task) = 0;
  virtual void task_output(const Job& job, const Task& task, OutputStream stream,
                           std::string_view bytes) = 0;
  virtual void job_finished(const Job& job, const JobExit& exit, Clock::duration took) = 0;
  // A service passed its readiness checks after `waited`; `variables` are
  // what its ready_log's groups give the jobs after it.
  virtual void service_ready(const Job& job, Clock::duration waited, const Params& variables) = 0;
  // The files of one attempt of a job's `outputs:` (one rank's, for a job
  // that spans hosts) were brought back into `into`, or could not be.
  virtual void outputs_collected(JobId job, int attempt, std::optional<int> rank,
                                 const std::string& into, const FetchedFiles& fetched) = 0;
  // Something the user should know about the run as a whole: the queue is
  // locked or does not parse, a job cannot be placed, stopping.
  virtual void notice(const std::string& message) = 0;
  virtual void warning(const std::string& message) = 0;
};

}  // namespace runner
