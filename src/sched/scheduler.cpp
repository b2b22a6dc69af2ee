// The scheduler's rules.
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
#include "runner/sched/scheduler.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>

#include "runner/config/job_render.h"
#include "runner/config/multi_node.h"
#include "runner/config/template.h"
#include "runner/core/debug_log.h"
#include "runner/exec/shell.h"
#include "runner/sched/job_end.h"
#include "runner/sched/job_records.h"
#include "runner/ui/exit_text.h"

namespace runner {

Scheduler::Scheduler(Backend& backend, JobSource& source, RunLog& run_log, RunObserver& observer,
                     SchedulerOptions options, std::function<JobId()> next_job_id)
    : m_fleet(backend.fleet()),
      m_source(source),
      m_run_log(run_log),
      m_observer(observer),
      m_options(options),
      m_next_job_id(std::move(next_job_id)),
      m_hosts(backend, *this, m_options, m_run_log, m_observer,
              {[this](OrphanJob orphan) { m_reruns.add_orphan(std::move(orphan)); },
               [this] { m_look.changed(); }}),
      m_slots(m_fleet),
      m_gpu_gates(m_fleet, m_slots, m_hosts.table(), m_options, m_observer),
      m_steps(m_fleet, m_hosts.table(), m_hosts.ops(), m_observer,
              [this](BroadcastSteps::Pushed pushed) { step_pushed(std::move(pushed)); }),
      m_gangs(m_fleet, m_hosts.executors(), options.run_id),
      m_services(m_fleet, m_running, m_run_log, m_observer),
      m_chores(m_fleet, m_hosts, m_options, m_services, m_gpu_gates, m_run_log, m_observer,
               [this] { m_look.changed(); }),
      m_reruns(m_options.mode, m_observer),
      m_look(m_observer, m_options.retry_interval),
      m_render(m_fleet, m_services, m_gangs, m_look),
      m_pace(m_options.take_until) {}

std::vector<HostOps*> Scheduler::host_ops() const {
  std::vector<HostOps*> host_ops;
  for (const auto& ops : m_hosts.ops()) host_ops.push_back(ops.get());
  return host_ops;
}

std::vector<Executor*> Scheduler::executors() const {
  std::vector<Executor*> executors;
  for (const auto& executor : m_hosts.executors()) executors.push_back(executor.get());
  return executors;
}

void Scheduler::stop_scheduling() { m_outcome.interrupt(); }

void Scheduler::cancel_running(Clock::time_point now) {
  m_outcome.cancel();
  m_steps.stop_pushing();
  for (auto& [id, job] : m_running) {
    job.running().cancelled = true;
    if (!job.running().kill_at) stop_job(job, now);
  }
}

bool Scheduler::finished() const {
  if (!m_running.empty() || m_gangs.staging() || m_chores.busy() || m_steps.pushing())
    return false;
  return nothing_left_to_run();
}

bool Scheduler::only_services_left() const {
  return !m_gangs.staging() && m_running.size() == m_services.running().size();
}

bool Scheduler::nothing_left_to_run() const {
  // Services are torn down once nothing else is left: nothing more runs.
  if (m_outcome.stopping() || m_outcome.unrunnable() || m_services.tearing_down()) return true;
  if (m_hosts.table().any(HostState::connecting) || m_hosts.table().any(HostState::cleaning)) return false;
  if (!m_hosts.table().any(HostState::ready)) return !m_hosts.table().any(HostState::reconnecting) || !work_waits();
  if (m_options.daemon) return false;
  return !work_waits();
}

bool Scheduler::work_waits() const {
  return !m_reruns.empty() || !m_look.empty() || m_look.due();
}

int Scheduler::exit_code() const {
  // Jobs left for `--resume`: put back, or in a queue no host was ready to take from.
  return m_outcome.exit_code(!m_reruns.empty() ||
                             (!m_hosts.table().any(HostState::ready) && !m_look.empty()));
}

void Scheduler::host_failed(int host, const Status& error) {
  switch (m_hosts.failed(host, error, m_outcome.stopping())) {
    case HostLoss::allocation_ending:
      m_outcome.stop();
      break;
    case HostLoss::given_up:
      // In broadcast mode every job was meant to run on this host too.
      if (m_options.mode == Mode::broadcast) m_outcome.failed();
      break;
    case HostLoss::reconnecting:
    case HostLoss::ignored:
      break;
  }
}

void Scheduler::say_if_no_host_is_left() {
  if (m_hosts.table().any_usable() || !m_hosts.table().any(HostState::set_aside) ||
      m_outcome.stopping())
    return;
  if (!m_reruns.empty())
    m_look.report_once(fmt::format(
        "no usable host is left: {} job{} that could not start wait{} for `runner queue "
        "--resume`; the queue file keeps the rest",
        m_reruns.size(), m_reruns.size() == 1 ? "" : "s", m_reruns.size() == 1 ? "s" : ""));
  else if (!m_look.empty())
    m_look.report_once("no usable host is left: the queue file keeps the jobs that did not run");
}

void Scheduler::stop_job(Job& job, Clock::time_point now) {
  for (const Task& task : job.tasks) {
    if (task.exit) continue;
    if (!job.spec.cancel.empty()) m_chores.run_cancel_command(job, task);
    m_hosts.executor(task.host).signal_task(task.id, SIGTERM);
  }
  job.running().kill_at = now + m_options.kill_grace;
}

void Scheduler::tear_down(Job& job, Clock::time_point now) {
  // The journal's job_end says the runner stopped it: not a failure.
  job.running().cancelled = true;
  if (!job.running().kill_at) stop_job(job, now);
}

std::size_t Scheduler::stop_service(std::string_view name, Clock::time_point now) {
  StopRequest request = m_services.stop_asked(name);
  for (JobId id : request.to_stop) tear_down(m_running.at(id), now);
  return request.named;
}

void Scheduler::task_started(TaskId id, long pgid) {
  auto [job, task] = m_running.job_of_task(id);
  if (!job) return;
  task->group = {pgid, m_hosts.executor(task->host).group_mark(id)};
  if (std::all_of(job->tasks.begin(), job->tasks.end(),
                  [](const Task& t) { return t.started(); })) {
    Running& running = job->running();
    running.process_start = m_options.clock();
    if (auto timeout = job->spec.timeout ? job->spec.timeout : m_options.default_timeout)
      if (!running.kill_at && !job->spec.service)
        running.deadline = *running.process_start + *timeout;
  }
  m_run_log.record_process_group(job->id, task->group, recorded_rank(*job, *task));
  m_observer.task_started(*job, *task);
  if (job->spec.service && m_services.process_started(*job, m_options.clock()))
    m_look.changed();
}

void Scheduler::signal_failed(TaskId id, int signal, const std::string& why) {
  auto [job, task] = m_running.job_of_task(id);
  std::string who =
      job ? fmt::format("#{} [{}]", job->id, task->label) : fmt::format("task {}", id);
  m_observer.warning(fmt::format("{} could not send SIG{} to its process group: {}", who,
                                 signal_name(signal), why));
}

void Scheduler::task_output(TaskId id, OutputStream stream, std::string_view bytes) {
  if (auto [job, task] = m_running.job_of_task(id); job) {
    m_observer.task_output(*job, *task, stream, bytes);
    if (job->spec.service && m_services.output(*job, bytes, m_options.clock()))
      m_look.changed();
  }
}

void Scheduler::task_exited(TaskId id, const JobExit& exit) {
  if (auto [job, task] = m_running.job_of_task(id); job) task_ended(*job, *task, exit);
}

void Scheduler::task_ended(Job& job, Task& task, const JobExit& exit) {
  task.exit = exit;
  Running& running = job.running();
  if (job.tasks.size() > 1 && !exit.succeeded() && !running.failed_rank && !running.kill_at) {
    // Fail together: the others would wait for this rank forever.
    running.failed_rank = task.rank;
    m_observer.warning(fmt::format("#{} rank {} [{}] {}; stopping its other ranks", job.id,
                                   task.rank, task.label, describe_exit(exit)));
    stop_job(job, m_options.clock());
  }
  for (const Task& each : job.tasks)
    if (!each.exit) return;
  end_job(job.id, exit_of_tasks(job));
}

void Scheduler::end_job(JobId id, const JobExit& reported) {
  std::optional<Job> ended = m_running.remove(id);
  if (!ended) return;
  Job job = std::move(*ended);
  for (const Task& task : job.tasks) m_slots.release(task.slots);
  for (const Task& each : job.tasks)
    if (each.exit && each.exit->lost() && each.started()) m_hosts.job_lost(each.host, each.group);
  // The task whose end is the job's.
  const Task& task = job.tasks[job.failed_rank().value_or(0)];

  JobEnd end = judge_end(job, reported,
                         EndRules{m_options.mode, m_options.max_requeue, m_options.default_retries,
                                  static_cast<int>(m_fleet.hosts.size()), m_outcome.stopping(),
                                  m_hosts.allocation_ending()});
  if (job.spec.service) {
    std::optional<ServiceCleanup> cleanup = m_services.ended(job, m_outcome.stopping(), end);
    if (cleanup) m_chores.clean_up_after(std::move(*cleanup));
    if (end.stops_run) m_outcome.stop();
  }
  m_chores.collect_outputs(job);
  m_chores.remove_hostfile(m_gangs.ended(job));
  // A host where a process could not start is set aside (in the next step).
  bool refused = end.exit.not_started() && !end.exit.timed_out && !end.exit.cancelled;
  if (refused) m_hosts.job_refused(task.host, reported.error());
  if (end.failed()) {
    m_outcome.failed();
    m_steps.job_failed();
  }
  const Running& running = job.running();
  Clock::duration ran =
      running.process_start ? m_options.clock() - *running.process_start : Clock::duration::zero();
  if (end.exit.succeeded() && running.process_start) {
    m_pace.succeeded(ran);
  }
  job.state = Done{end.again.has_value(), running.failed_rank, m_outcome.stopping()};
  m_run_log.record_end(job.id, end.exit, std::chrono::duration_cast<std::chrono::milliseconds>(ran),
                       job.will_rerun(), job.failed_rank());
  m_observer.job_finished(job, end.exit, ran);
  if (end.again) {
    debug_log::step("#{}: {}; back at the queue's head to run again{}", job.id,
                    describe_exit(end.exit),
                    m_outcome.stopping() ? " in the next run (--resume)" : "");
    m_reruns.put_back(std::move(*end.again));
  }
  m_look.changed();
}

void Scheduler::step(Clock::time_point now) {
  m_now = now;
  act_on_timers(now);
  // Every other job done, and the services ready (or given up on): the end.
  if (m_services.any() && only_services_left() && !m_services.starting() && nothing_left_to_run())
    if (std::optional<JobId> next = m_services.next_to_tear_down())
      tear_down(m_running.at(*next), now);
  m_hosts.set_aside_refusing_hosts();
  say_if_no_host_is_left();
  m_hosts.clean_live_hosts();
  // While the journal cannot be written, nothing is taken and nothing starts.
  if (m_unrecorded && !recorded(now)) return;
  m_chores.look_at_gpus(!m_outcome.stopping() && work_waits(), now);
  bool took = can_take_now();
  if (took) {
    if (m_options.mode == Mode::queue)
      pump_queue(now);
    else
      pump_broadcast(now);
  }
  // One sync makes what executors reported (ends, losses) and the new
  // starts (staged jobs' too) durable together, before any of them can run.
  if ((took || m_running.any_unsent()) && !recorded(now)) return;
  start_launched();
}

bool Scheduler::recorded(Clock::time_point now) {
  m_unrecorded = !m_run_log.sync().ok();
  if (m_unrecorded) {
    m_look.retry_from(now);
    // Jobs taken but never started end, as not started, once the run stops.
    if (m_outcome.stopping())
      for (JobId id : m_running.take_unsent())
        end_job(id, JobExit::failed_because("not started: the journal could not be written"));
  }
  return !m_unrecorded;
}

void Scheduler::act_on_timers(Clock::time_point now) {
  for (auto& [id, job] : m_running) {
    Running& running = job.running();
    if (running.deadline && now >= *running.deadline && !running.kill_at) {
      running.timed_out = true;
      std::string timeout = job.spec.timeout_text.empty() ? "its timeout" : job.spec.timeout_text;
      m_observer.warning(
          running.process_start
              ? fmt::format("#{} [{}] timed out after {}; stopping it", id, job.label(), timeout)
              : fmt::format("#{} [{}] did not start within {} plus {:.0f}s for its host's login "
                            "shell; stopping it",
                            id, job.label(), timeout,
                            std::chrono::duration<double>(m_options.start_allowance).count()));
      stop_job(job, now);
    } else if (running.kill_at && now >= *running.kill_at) {
      for (const Task& task : job.tasks)
        if (!task.exit) m_hosts.executor(task.host).signal_task(task.id, SIGKILL);
      running.kill_at = now + m_options.kill_grace;
    }
  }
  m_hosts.reconnect_due(now);
  m_look.retry_if_due(now);
  for (ReadinessStep& step : m_services.readiness_steps(now)) {
    if (step.action != ReadinessStep::Action::stop) {
      m_chores.probe(step);
      continue;
    }
    Job& job = m_running.at(step.job);
    // The journal's job_end says it timed out.
    if (step.timed_out) job.running().timed_out = true;
    stop_job(job, now);
  }
  m_chores.give_up_gpu_looks(now);
}

std::optional<Clock::time_point> Scheduler::deadline() const {
  if (can_take_now()) return Clock::time_point::min();
  std::optional<Clock::time_point> due = m_look.next_retry();
  auto consider = [&](const std::optional<Clock::time_point>& t) {
    if (t && (!due || *t < *due)) due = t;
  };
  for (const auto& [id, job] : m_running) {
    const Running& running = job.running();
    consider(running.kill_at ? running.kill_at : running.deadline);
  }
  consider(m_services.next_due());
  consider(m_hosts.next_reconnect());
  consider(m_gpu_gates.next_due(!m_outcome.stopping() && work_waits()));
  return due;
}

void Scheduler::begin(Job job, Placement placement, std::vector<std::string> commands,
                      Clock::time_point now) {
  if (!job.spec.nodes) {
    launch(std::move(job), std::move(placement), std::move(commands), now);
    return;
  }
  JobId id = job.id;
  m_slots.hold(placement, id);
  int master_host = m_gangs.stage(std::move(job), std::move(placement));
  m_hosts.ops(master_host).survey_network(
      [this, id](const Result<NetworkSurvey>& survey) { staged(id, survey); });
}

void Scheduler::staged(JobId id, const Result<NetworkSurvey>& survey) {
  auto outcome = m_gangs.staged(id, survey);
  if (!outcome) return;
  m_look.changed();
  if (auto* lost = std::get_if<GangHostLost>(&*outcome)) {
    // Rank 0's host was lost before it answered: nothing ran; the job goes
    // back to the head of the queue, as it was.
    m_slots.release(lost->placement);
    m_reruns.put_back(std::move(lost->job));
    return;
  }
  auto& [job, placement, warnings] = std::get<GangReady>(*outcome);
  for (const std::string& warning : warnings) m_observer.warning(warning);
  auto commands = m_render.render(job.spec, placement, &*job.layout);
  if (!commands) {
    // The queue's check rendered them already; only a master port can
    // differ, so this does not happen: end it rather than hold its slots.
    m_slots.release(placement);
    m_chores.remove_hostfile(m_gangs.ended(job));
    m_observer.warning(fmt::format("#{} could not be rendered with its master port", id));
    return;
  }
  launch(std::move(job), std::move(placement), std::move(*commands), m_options.clock());
  if (m_outcome.cancelling()) {
    // Interrupted twice while it was staged: recorded, and ended unstarted.
    Job& launched = m_running.at(id);
    launched.running().cancelled = true;
    m_running.never_send(id);
    JobExit unstarted = JobExit::not_started_because("the run was stopped");
    for (Task& task : launched.tasks) task.exit = unstarted;
    end_job(id, unstarted);
  }
}

void Scheduler::launch(Job job, Placement placement, std::vector<std::string> commands,
                       Clock::time_point now) {
  for (std::size_t rank = 0; rank < placement.size(); ++rank) {
    Task task;
    task.rank = static_cast<int>(rank);
    task.host = m_fleet.slots[placement[rank].front()].host;
    task.label = slots_label(m_fleet, placement[rank]);
    if (job.layout) {
      task.label += fmt::format(" rank {}", rank);
      task.setup.environment = multi_node_environment(*job.layout, task.rank);
      task.setup.files.emplace_back(job.layout->hostfile, hostfile_text(job.spec, *job.layout));
    }
    task.slots = std::move(placement[rank]);
    task.setup.slots = static_cast<int>(task.slots.size());
    task.command = std::move(commands[rank]);
    job.tasks.push_back(std::move(task));
  }
  Running running;
  running.start = now;
  // Its timeout counts from its processes' start (task_started); until then
  // the bound is on the start itself.
  if (auto timeout = job.spec.timeout ? job.spec.timeout : m_options.default_timeout)
    if (!job.spec.service) running.deadline = now + *timeout + m_options.start_allowance;
  job.state = running;
  for (const Task& t : job.tasks) m_slots.hold(t.slots, job.id);
  // Its tasks get their ids, and it is sent once the run log holds it.
  Job& launched = m_running.add(std::move(job));
  if (launched.spec.service) m_services.started(launched, now);
  m_run_log.record_launch(job_start_record(m_fleet, launched));
  m_observer.job_launched(launched);
}

void Scheduler::start_launched() {
  for (JobId id : m_running.take_unsent()) {
    for (const Task& task : m_running.at(id).tasks)
      m_hosts.executor(task.host).start_task_with(task.id, task.command, task.setup);
  }
}

}  // namespace runner
