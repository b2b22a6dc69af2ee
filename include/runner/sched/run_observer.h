// What the scheduler reports about a run, for the terminal, the journal and
// the job logs. The scheduler decides; observers only record and show.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/queue_entry.h"
#include "runner/core/status.h"
#include "runner/exec/transport.h"

namespace runner {

// A job that has been given slots and started.
struct RunningJob {
  JobId id = 0;
  JobSpec spec;
  std::string command;     // rendered
  int host = 0;
  std::vector<int> slots;  // indices into Fleet::slots
  std::string label;       // "node01 gpu=0", "node01 gpu=2,3"
  Clock::time_point start;  // sent to its host
  // When its process started (job_started): its timeout and duration count
  // from here.
  std::optional<Clock::time_point> process_start;
  long pgid = 0;           // 0 until known
  int attempt = 1;         // 2 and up: run again after a loss or a failure
  int requeues = 0;        // times put back after its host was lost
  int retries_used = 0;    // times run again after failing
  int start_failures = 0;  // times put back because it did not start
  std::optional<Clock::time_point> deadline;  // its timeout (before its start: its bound)
  std::optional<Clock::time_point> kill_at;   // SIGKILL if still running then
  bool timed_out = false;
  bool cancelled = false;
  bool will_rerun = false;  // set when it ended and goes back to the queue
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  virtual void host_ready(const Host& host) = 0;
  // No job will run on the host again in this run.
  virtual void host_failed(const Host& host, const TransportError& error) = 0;
  // The host was lost; the scheduler connects again after `wait`, and no
  // job starts there meanwhile.
  virtual void host_reconnecting(const Host& host, const TransportError& error,
                                 Clock::duration wait) = 0;
  virtual void job_started(const RunningJob& job) = 0;
  virtual void job_pgid(const RunningJob& job) = 0;
  virtual void job_output(const RunningJob& job, OutputStream stream, std::string_view bytes) = 0;
  virtual void job_finished(const RunningJob& job, const JobExit& exit, Clock::duration took) = 0;
  // Makes everything reported so far durable (the journal is synced):
  // called before the scheduler acts on it. An error while that cannot be
  // done (the journal cannot be written): then no job may start, and the
  // scheduler calls it again on later steps until it is ok.
  virtual Status checkpoint() = 0;
  // Something the user should know about the run as a whole: the queue is
  // locked or does not parse, a job cannot be placed, stopping.
  virtual void notice(const std::string& message) = 0;
  virtual void warning(const std::string& message) = 0;
};

}  // namespace runner
