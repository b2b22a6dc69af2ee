// The scheduling policy, for both modes. Owns which slot runs which job,
// what happens when a job or a host fails, and when the run is over; touches
// no socket and no file itself: jobs come from a JobSource, run on the hosts
// of a Backend through its executors; what it decides is written to a RunLog,
// durable before anything it decided starts, and shown by a RunObserver.
//
// Queue mode: whenever slots are free, take the first job of the queue if it
// fits on one ready host (k free slots of one host for a k-slot job; FIFO:
// a job that does not fit yet blocks those behind it). A job of `nodes: N`
// takes k free slots on each of N different hosts at once, or waits holding
// nothing, so two such jobs never hold part of what each needs; as the head
// of the queue it is never passed by the jobs behind it. Its tasks end
// together: when one fails (exits non-zero, is lost, cannot start) the
// others are stopped, and the job ends as that rank ended. Jobs put back (lost
// with their host, or failed with retries left) go before the queue file.
// Broadcast mode: once every host is connected (or failed), run each job on
// every slot in lockstep; a failure stops the run after the step unless
// ignore_errors.
//
// A job whose process never started (JobExit::not_started) is not failed:
// it goes back to the head of the queue, without counting as an attempt,
// and the host where it could not start is set aside for the rest of the
// run, as Slurm drains a node (named once, with the executor's reason).
// A job that cannot start more often than there are hosts fails. When no
// usable host is left, the run ends with those jobs waiting for `--resume`.
//
// A job's timeout and duration count from the start of its process
// (task_started), not from the request: a slow login shell is not the
// job's time. A job that never reports its start is stopped at its timeout
// plus start_allowance after the request.
//
// When the allocation of the hosts ends (a Slurm allocation cancelled,
// requeued, preempted or out of time: ErrorKind::ended), no job starts
// anywhere again; the run ends once the running jobs have, and those lost
// wait for the next run (`--resume`).
//
// A host whose connection is lost is reconnected with jittered exponential
// backoff; before its slots are used again, the process groups of the jobs
// that were lost there are killed (unless keep_orphans).
//
// Threading: none; events arrive from executors' step(), scheduling
// happens in the scheduler's own step() (add it to the loop last). Time is
// what step() is given.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/exec/backend.h"
#include "runner/exec/executor.h"
#include "runner/sched/broadcast_steps.h"
#include "runner/sched/gangs.h"
#include "runner/sched/gpu_gates.h"
#include "runner/sched/host_table.h"
#include "runner/sched/job.h"
#include "runner/sched/job_end.h"
#include "runner/sched/job_source.h"
#include "runner/sched/placer.h"
#include "runner/sched/run_observer.h"
#include "runner/sched/scheduler_options.h"
#include "runner/sched/services.h"
#include "runner/sched/slot_book.h"
#include "runner/state/run_log.h"

namespace runner {

class Scheduler final : public ExecutorEvents, public Pollable {
 public:
  // Runs on `backend`'s hosts, through the executors it makes (one per
  // host, reporting to this scheduler); `backend` must outlive it. What it
  // decides goes to `run_log`, and what it sees to `observer`.
  Scheduler(Backend& backend, JobSource& source, RunLog& run_log, RunObserver& observer,
            SchedulerOptions options, std::function<JobId()> next_job_id);

  // The executors, for the event loop to poll and to shut down at the end.
  std::vector<Executor*> executors() const;
  // Before start(): jobs of a dead run to check, clean up after, and run
  // again first.
  void adopt_orphans(std::vector<OrphanJob> orphans);
  // Starts connecting every host.
  void start();
  // The queue file (or its lock) changed: look at it again.
  void queue_changed() { m_queue_dirty = true; }
  // First interrupt: start no more jobs; running ones finish.
  void stop_scheduling();
  // Second interrupt: stop every running job (its `cancel:` command, TERM to
  // its process group, KILL after the grace period).
  void cancel_running(Clock::time_point now);
  // `runner stop NAME`: stops the running services named NAME (`service:
  // NAME`, or "#ID" for any service) as the run's end would (its `cancel:`
  // command, TERM, KILL after the grace period, then its `after:`
  // command); not a failure, and not started again. How many it stops.
  std::size_t stop_service(std::string_view name, Clock::time_point now);

  bool finished() const;
  // 0: every job succeeded; 1: a job failed or could not run; 130: interrupted.
  int exit_code() const;
  std::size_t running_count() const { return m_running.size(); }
  const std::map<JobId, Job>& running() const { return m_running; }

  // ExecutorEvents
  void host_ready(int host) override;
  void host_failed(int host, const Status& error) override;
  // (Executors report on tasks.)
  void task_started(TaskId task, long pgid) override;
  void task_output(TaskId task, OutputStream stream, std::string_view bytes) override;
  void task_exited(TaskId task, const JobExit& exit) override;
  void signal_failed(TaskId task, int signal, const std::string& why) override;

  // Pollable: no descriptors; step() starts what can start and acts on
  // timers (timeouts, kills, reconnects, retries of the queue).
  void poll_fds(std::vector<pollfd>&) override {}
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override;

 private:
  bool can_take_now() const;
  void pump_queue(Clock::time_point now);
  void pump_broadcast(Clock::time_point now);
  // Starts put-back jobs while they fit; false if one still waits.
  bool pump_reruns(Clock::time_point now);
  // Where a job can go now, as the hosts, slots, gates and services are.
  Placer placer() const;
  // `job`'s commands on `placement`, one per task (a multi-node job's with
  // `layout`'s values); nullopt (and a notice) if a template cannot be
  // rendered there (a variable is missing).
  std::optional<std::vector<std::string>> render(const JobSpec& job, const Placement& placement,
                                                 const NodeLayout* layout = nullptr);
  // A job taken (or put back) with its placement and commands: recorded
  // and sent (launch), or, with `nodes:`, first staged: it holds its slots
  // while rank 0's host says which ports are in use (staged), then is
  // launched with its master port.
  void begin(Job job, Placement placement, std::vector<std::string> commands,
             Clock::time_point now);
  void staged(JobId id, const Result<NetworkSurvey>& survey);
  // Records the job as running on `placement`; its commands are sent by
  // start_launched(), after the journal holds the start.
  void launch(Job job, Placement placement, std::vector<std::string> commands,
              Clock::time_point now);
  // Removes an ended multi-node job's hostfile where Gangs says.
  void remove_hostfile(const HostfileRemoval& removal);
  // A job takes the task's end: the job's own end for a job of one task;
  // for a multi-node job, the others are stopped when it failed, and the
  // job ends with its last task.
  void task_ended(Job& job, Task& task, const JobExit& exit);
  // A job taken from the queue file, with its id.
  Job new_job(const JobSpec& spec);
  // A service the runner stops (the run's end, `runner stop`): recorded as
  // cancelled, not a failure.
  void tear_down(Job& job, Clock::time_point now);
  // Runs on its host what Services asks for a service's readiness.
  void take_readiness_steps(Clock::time_point now);
  // What is left of a service once it ended: kills what outlived its shell,
  // then runs its `after:` command.
  void clean_up_after(ServiceCleanup cleanup);
  void run_after_command(ServiceCleanup cleanup);
  // Runs the looks at GPUs that GpuGates asks for.
  void look_at_gpus(Clock::time_point now);
  // Brings back the files the job's `outputs:` name from each of its
  // tasks' hosts (job_outputs.cpp).
  void collect_outputs(const Job& job);
  // Broadcast mode (broadcast_mode.cpp). No step is under way.
  bool next_step_can_begin() const;
  // A step with `push:`: its files go to every ready host, then its
  // command runs on the slots of the hosts that have them.
  void push_step(BroadcastStep step);
  void step_pushed(int host, const PutResult& result);
  // One step's commands, each on its slot.
  void launch_step(BroadcastStep step, Clock::time_point now);
  // take_until is too close for one more job (queue mode).
  bool out_of_time(Clock::time_point now) const;
  // Every job but the services is done: the run would end but for them.
  bool only_services_left() const;
  // Jobs but services are done, and nothing is left to take.
  bool nothing_left_to_run() const;
  // Jobs wait to be taken (put back, or in the queue file as last seen),
  // or the queue file is to be looked at again.
  bool work_waits() const;
  void start_launched();
  // The run log's sync; false (and a retry timer) while the journal
  // cannot be written.
  bool recorded(Clock::time_point now);
  // Kills the leftovers of jobs lost on hosts that are still up.
  void clean_live_hosts();
  void handle_stop(const TakeBatch& batch, Clock::time_point now);
  // TERM (after its `cancel:` command), KILL later.
  void stop_job(Job& job, Clock::time_point now);
  void run_cancel_command(const Job& job, const Task& task);
  // The running job that `task` belongs to, and the task; nullptr for a
  // task that is no longer known.
  Job* job_of(TaskId task, Task** found);
  // The job is over: frees its slots and decides whether it runs again.
  void end_job(JobId job, const JobExit& exit);
  void act_on_timers(Clock::time_point now);
  // Kills leftovers of lost or orphaned jobs on a host that is back, then
  // opens its slots.
  void clean_host(int host);
  void requeue_orphans(int host, const std::string& why);
  // The allocation of every host is ending (ErrorKind::ended): no host takes
  // anything again, and the run ends when its running jobs have, those
  // lost waiting for the next run (`--resume`).
  void fleet_ending(const Status& why);
  // Puts an orphan in the rerun queue (queue mode).
  void rerun_orphan(OrphanJob orphan);
  // Sets aside the ready hosts where a job could not start.
  void set_aside_refusing_hosts();
  void report_once(const std::string& message);

  const Fleet& m_fleet;
  std::vector<std::unique_ptr<Executor>> m_executors;
  JobSource& m_source;
  RunLog& m_run_log;
  RunObserver& m_observer;
  SchedulerOptions m_options;
  std::function<JobId()> m_next_job_id;
  Clock::time_point m_now{};

  HostTable m_hosts;
  SlotBook m_slots;
  GpuGates m_gpu_gates;
  BroadcastSteps m_steps;  // broadcast mode's current step
  Gangs m_gangs;  // multi-node jobs: staging, layout, master ports
  std::map<JobId, Job> m_running;
  Services m_services;
  std::map<TaskId, JobId> m_task_job;  // the running tasks' jobs
  TaskId m_next_task_id = 1;
  std::vector<JobId> m_launched;  // recorded, not yet sent to their hosts
  std::deque<Job> m_reruns;       // Queued: to run (again, or taken ahead) before the queue's

  bool m_queue_dirty = true;
  bool m_queue_empty = false;  // last look found no job
  std::optional<Clock::time_point> m_retry_at;
  std::string m_last_report;  // to say each queue problem once
  std::string m_head_wait_said;  // why the queue's head waited, as the debug log last said

  bool m_unrecorded = false;  // the last sync failed: start nothing
  bool m_stopping = false;
  bool m_interrupted = false;
  bool m_fleet_ending = false;  // ErrorKind::ended: said, and every host failed
  bool m_cancelling = false;  // second interrupt: staged jobs do not start
  int m_after_commands = 0;       // `after:` commands and hostfile removals still running
  int m_fetches = 0;              // outputs still being brought back
  Clock::duration m_succeeded_time{};  // the durations of the jobs that succeeded
  int m_succeeded = 0;
  int m_failures = 0;
  bool m_unrunnable = false;  // jobs remained that no usable host could run
};

}  // namespace runner
