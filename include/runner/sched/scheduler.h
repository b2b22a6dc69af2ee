// The scheduling policy, for both modes; its rules are in scheduler.cpp. The
// core keeps a job's life (taken in taking.cpp, placed, recorded, started,
// ended, run again; RunningJobs holds those launched until their end); its
// components own the rest: Hosts, SlotBook, GpuGates, Services, Gangs,
// BroadcastSteps, HostChores, QueueLook, JobPace, RunOutcome, Reruns,
// CommandRenderer. It touches no socket and no file: what it decides goes to a
// RunLog, durable before anything decided starts, and to a RunObserver.
// Threading: none; events come from executors' step(), scheduling happens in
// its own step() (add it to the loop last).
#pragma once

#include <functional>

#include "runner/exec/backend.h"
#include "runner/sched/broadcast_steps.h"
#include "runner/sched/command_renderer.h"
#include "runner/sched/host_chores.h"
#include "runner/sched/job_pace.h"
#include "runner/sched/job_source.h"
#include "runner/sched/placer.h"
#include "runner/sched/queue_look.h"
#include "runner/sched/reruns.h"
#include "runner/sched/run_outcome.h"
#include "runner/sched/running_jobs.h"
#include "runner/sched/slot_book.h"

namespace runner {

class Scheduler final : public ExecutorEvents, public Pollable {
 public:
  // `backend` must outlive the scheduler.
  Scheduler(Backend& backend, JobSource& source, RunLog& run_log, RunObserver& observer,
            SchedulerOptions options, std::function<JobId()> next_job_id);

  // For the event loop to poll (and the executors to shut down at the end).
  std::vector<Executor*> executors() const;
  std::vector<HostOps*> host_ops() const;
  // Before start(): jobs of a dead run to check, clean up after, run first.
  void adopt_orphans(std::vector<OrphanJob> orphans) { m_hosts.adopt_orphans(std::move(orphans)); }
  void start() { m_hosts.connect_all(); }
  // The queue file (or its lock) changed.
  void queue_changed() { m_look.changed(); }
  // First interrupt: start no more jobs. Second: stop the running ones
  // (`cancel:`, TERM, KILL after the grace period).
  void stop_scheduling();
  void cancel_running(Clock::time_point now);
  // `runner stop NAME`: stops the services named NAME (or "#ID") as the
  // run's end would, not as a failure; how many.
  std::size_t stop_service(std::string_view name, Clock::time_point now);

  bool finished() const;
  // 0: every job succeeded; 1: a job failed or could not run; 130: interrupted.
  int exit_code() const;
  std::size_t running_count() const { return m_running.size(); }
  // Jobs taken out of the queue file ahead of need that have not run: the
  // journal keeps them for `--resume`.
  std::size_t taken_ahead_waiting() const { return m_reruns.taken_ahead_waiting(); }

  // ExecutorEvents
  void host_ready(int host) override { m_hosts.ready(host); }
  void host_failed(int host, const Status& error) override;
  void task_started(TaskId task, long pgid) override;
  void task_output(TaskId task, OutputStream stream, std::string_view bytes) override;
  void task_exited(TaskId task, const JobExit& exit) override;
  void signal_failed(TaskId task, int signal, const std::string& why) override;

  // Pollable: no descriptors; step() starts what can start and acts on timers.
  void poll_fds(std::vector<pollfd>&) override {}
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override;

 private:
  // Taking (taking.cpp).
  bool can_take_now() const;
  bool pump_reruns(Clock::time_point now);  // false while a put-back job waits
  void pump_queue(Clock::time_point now);
  void pump_broadcast(Clock::time_point now);
  void step_pushed(BroadcastSteps::Pushed pushed);
  void launch_step(BroadcastStep step, Clock::time_point now);
  Job new_job(const JobSpec& spec);
  Placer placer() const;

  // A job's life (scheduler.cpp).
  void begin(Job job, Placement placement, std::vector<std::string> commands,
             Clock::time_point now);
  void staged(JobId id, const Result<NetworkSurvey>& survey);
  void launch(Job job, Placement placement, std::vector<std::string> commands,
              Clock::time_point now);
  bool recorded(Clock::time_point now);  // the run log's sync, retried on failure
  void start_launched();
  void task_ended(Job& job, Task& task, const JobExit& exit);
  void end_job(JobId job, const JobExit& exit);
  void stop_job(Job& job, Clock::time_point now);
  void tear_down(Job& job, Clock::time_point now);
  void act_on_timers(Clock::time_point now);
  void say_if_no_host_is_left();
  bool only_services_left() const;
  bool nothing_left_to_run() const;
  bool work_waits() const;

  const Fleet& m_fleet;
  JobSource& m_source;
  RunLog& m_run_log;
  RunObserver& m_observer;
  SchedulerOptions m_options;
  std::function<JobId()> m_next_job_id;
  Clock::time_point m_now{};

  Hosts m_hosts;
  SlotBook m_slots;
  GpuGates m_gpu_gates;
  BroadcastSteps m_steps;
  Gangs m_gangs;
  RunningJobs m_running;
  Services m_services;
  HostChores m_chores;
  Reruns m_reruns;

  QueueLook m_look;
  CommandRenderer m_render;
  bool m_unrecorded = false;  // the last sync failed: start nothing
  JobPace m_pace;  // whether another job ends before the allocation does
  RunOutcome m_outcome;  // whether it stops, and its exit code
};

}  // namespace runner
