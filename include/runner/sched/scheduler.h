// The scheduling policy, for both modes. Owns which slot runs which job and
// when the run is over; touches no socket and no file itself: jobs come from
// a JobSource, run through HostTransports, and are reported to a
// RunObserver.
//
// Queue mode: whenever slots are free, take the first job of the queue if it
// fits on one ready host (k free slots of one host for a k-slot job; FIFO:
// a job that does not fit yet blocks those behind it).
// Broadcast mode: once every host is connected (or failed), run each job on
// every slot in lockstep; a failure stops the run after the step unless
// ignore_errors.
//
// Threading: none; events arrive from transports' step(), scheduling
// happens in the scheduler's own step() (add it to the loop last).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/exec/transport.h"
#include "runner/sched/job_source.h"
#include "runner/sched/run_observer.h"

namespace runner {

enum class Mode { queue, broadcast };

struct SchedulerOptions {
  Mode mode = Mode::queue;
  bool daemon = false;         // keep waiting for jobs when the queue is empty
  bool ignore_errors = false;  // broadcast: go on after a failed step
  // How long running jobs get between TERM and KILL when cancelled.
  Clock::duration kill_grace = std::chrono::seconds(5);
  // How soon to look at the queue again when it is locked or broken and no
  // file change is noticed.
  Clock::duration retry_interval = std::chrono::seconds(1);
};

class Scheduler final : public TransportEvents, public Pollable {
 public:
  Scheduler(const Fleet& fleet, std::vector<HostTransport*> transports, JobSource& source,
            RunObserver& observer, SchedulerOptions options, std::function<JobId()> next_job_id);

  // The transports, one per host in Fleet order, when they could not be
  // given to the constructor (they report to this scheduler).
  void set_transports(std::vector<HostTransport*> transports) {
    m_transports = std::move(transports);
  }
  // Starts connecting every host.
  void start();
  // The queue file (or its lock) changed: look at it again.
  void queue_changed() { m_queue_dirty = true; }
  // First interrupt: start no more jobs; running ones finish.
  void stop_scheduling();
  // Second interrupt: TERM every running job's process group, KILL after
  // the grace period.
  void cancel_running(Clock::time_point now);

  bool finished() const;
  // 0: every job succeeded; 1: a job failed or could not run; 130: interrupted.
  int exit_code() const;
  std::size_t running_count() const { return m_running.size(); }
  const std::map<JobId, RunningJob>& running() const { return m_running; }

  // TransportEvents
  void host_ready(int host) override;
  void host_failed(int host, const TransportError& error) override;
  void job_started(JobId job, long pgid) override;
  void job_output(JobId job, OutputStream stream, std::string_view bytes) override;
  void job_exited(JobId job, const JobExit& exit) override;

  // Pollable: no descriptors; step() starts what can start.
  void poll_fds(std::vector<pollfd>&) override {}
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override;

 private:
  enum class HostState { connecting, ready, failed };

  // Whether step() would take jobs: the queue may have changed and a job
  // could start now. deadline() is "at once" exactly then.
  bool can_take_now() const;
  void pump_queue(Clock::time_point now);
  void pump_broadcast(Clock::time_point now);
  // Slots for `job` on one ready host, or nullopt.
  std::optional<std::vector<int>> place(const JobSpec& job) const;
  // Renders and validates `job` on `slots`; false (and a notice) if a
  // variable is missing.
  bool render(const JobSpec& job, const std::vector<int>& slots, std::string* command);
  void launch(const JobSpec& job, std::vector<int> slots, std::string command,
              Clock::time_point now);
  // Notes why taking stopped: an empty queue, or one that cannot be read.
  void handle_stop(const TakeBatch& batch, Clock::time_point now);
  void report_once(const std::string& message);
  bool any_host_connecting() const;
  bool any_host_ready() const;
  std::string label_for(const std::vector<int>& slots) const;

  const Fleet& m_fleet;
  std::vector<HostTransport*> m_transports;
  JobSource& m_source;
  RunObserver& m_observer;
  SchedulerOptions m_options;
  std::function<JobId()> m_next_job_id;

  std::vector<HostState> m_host_state;
  std::vector<JobId> m_slot_job;  // 0: free
  std::map<JobId, RunningJob> m_running;

  bool m_queue_dirty = true;
  bool m_queue_empty = false;       // last look found no job
  bool m_blocked = false;           // head job cannot run on any usable host
  std::optional<Clock::time_point> m_retry_at;
  std::string m_last_report;        // to say each queue problem once

  bool m_stopping = false;
  bool m_interrupted = false;
  std::optional<Clock::time_point> m_kill_at;
  bool m_step_failed = false;       // broadcast: a job of the current step failed
  int m_failures = 0;
  bool m_unrunnable = false;        // jobs remained that no usable host could run
};

}  // namespace runner
