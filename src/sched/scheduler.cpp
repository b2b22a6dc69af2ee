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
      m_executors(backend.executors(*this)),
      m_source(source),
      m_run_log(run_log),
      m_observer(observer),
      m_options(options),
      m_next_job_id(std::move(next_job_id)),
      m_hosts(m_fleet.hosts.size(), Backoff{options.reconnect_first, options.reconnect_longest}),
      m_slots(m_fleet),
      m_gpu_gates(m_fleet, m_slots, m_hosts, m_options, m_observer),
      m_steps(m_fleet),
      m_gangs(m_fleet, m_executors, options.run_id),
      m_services(m_fleet, m_running, m_run_log, m_observer) {}

Placer Scheduler::placer() const {
  return Placer(m_fleet, m_hosts, m_slots, m_gpu_gates, m_services, m_now);
}

std::vector<Executor*> Scheduler::executors() const {
  std::vector<Executor*> executors;
  for (const auto& executor : m_executors) executors.push_back(executor.get());
  return executors;
}

void Scheduler::start() {
  for (auto& executor : m_executors) executor->connect();
}

void Scheduler::stop_scheduling() {
  if (m_stopping) return;
  m_stopping = true;
  m_interrupted = true;
}

void Scheduler::cancel_running(Clock::time_point now) {
  stop_scheduling();
  m_cancelling = true;
  if (m_steps.pushing())
    for (auto& executor : m_executors) executor->stop_transfers();
  for (auto& [id, job] : m_running) {
    job.running().cancelled = true;
    if (!job.running().kill_at) stop_job(job, now);
  }
}

bool Scheduler::finished() const {
  if (!m_running.empty() || m_gangs.staging() || m_after_commands > 0 || m_fetches > 0 ||
      m_steps.pushing())
    return false;
  return nothing_left_to_run();
}

bool Scheduler::only_services_left() const {
  return !m_gangs.staging() && m_running.size() == m_services.running().size();
}

bool Scheduler::nothing_left_to_run() const {
  // Services are torn down once nothing else is left: nothing more runs.
  if (m_stopping || m_unrunnable || m_services.tearing_down()) return true;
  if (m_hosts.any(HostState::connecting) || m_hosts.any(HostState::cleaning)) return false;
  if (!m_hosts.any(HostState::ready)) return !m_hosts.any(HostState::reconnecting) || !work_waits();
  if (m_options.daemon) return false;
  return !work_waits();
}

bool Scheduler::work_waits() const {
  return !m_reruns.empty() || !m_queue_empty || m_queue_dirty;
}

int Scheduler::exit_code() const {
  if (m_interrupted) return 130;
  if (m_failures > 0 || m_unrunnable) return 1;
  if (!m_reruns.empty()) return 1;
  if (!m_hosts.any(HostState::ready) && !m_queue_empty) return 1;
  return 0;
}

Job* Scheduler::job_of(TaskId id, Task** task) {
  auto owner = m_task_job.find(id);
  if (owner == m_task_job.end()) return nullptr;
  Job& job = m_running.at(owner->second);
  for (Task& candidate : job.tasks)
    if (candidate.id == id) *task = &candidate;
  return &job;
}

void Scheduler::task_started(TaskId id, long pgid) {
  Task* task = nullptr;
  Job* job = job_of(id, &task);
  if (!job) return;
  task->group = {pgid, m_executors[task->host]->group_mark(id)};
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
    m_queue_dirty = true;
}

void Scheduler::signal_failed(TaskId id, int signal, const std::string& why) {
  Task* task = nullptr;
  Job* job = job_of(id, &task);
  std::string who =
      job ? fmt::format("#{} [{}]", job->id, task->label) : fmt::format("task {}", id);
  m_observer.warning(fmt::format("{} could not send SIG{} to its process group: {}", who,
                                 signal_name(signal), why));
}

void Scheduler::task_output(TaskId id, OutputStream stream, std::string_view bytes) {
  Task* task = nullptr;
  if (Job* job = job_of(id, &task)) {
    m_observer.task_output(*job, *task, stream, bytes);
    if (job->spec.service && m_services.output(*job, bytes, m_options.clock()))
      m_queue_dirty = true;
  }
}

void Scheduler::task_exited(TaskId id, const JobExit& exit) {
  Task* task = nullptr;
  if (Job* job = job_of(id, &task)) task_ended(*job, *task, exit);
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
  auto it = m_running.find(id);
  if (it == m_running.end()) return;
  Job job = std::move(it->second);
  m_running.erase(it);
  for (const Task& task : job.tasks) {
    m_task_job.erase(task.id);
    m_slots.release(task.slots);
  }
  for (const Task& each : job.tasks)
    if (each.exit && each.exit->lost() && each.started() && !m_options.keep_orphans)
      m_hosts[each.host].leftover_groups.push_back(each.group);
  // The task whose end is the job's.
  const Task& task = job.tasks[job.failed_rank().value_or(0)];

  JobEnd end = judge_end(job, reported,
                         EndRules{m_options.mode, m_options.max_requeue, m_options.default_retries,
                                  static_cast<int>(m_fleet.hosts.size()), m_stopping,
                                  m_fleet_ending});
  if (job.spec.service) {
    std::optional<ServiceCleanup> cleanup = m_services.ended(job, m_stopping, end);
    if (cleanup) clean_up_after(std::move(*cleanup));
    if (end.stops_run) m_stopping = true;
  }
  collect_outputs(job);
  remove_hostfile(m_gangs.ended(job));
  // A host where a process could not start is set aside (in the next step).
  bool refused = end.exit.not_started() && !end.exit.timed_out && !end.exit.cancelled;
  if (refused && m_hosts[task.host].start_refusal.empty())
    m_hosts[task.host].start_refusal = reported.error();
  if (end.failed()) {
    ++m_failures;
    m_steps.job_failed();
  }
  const Running& running = job.running();
  Clock::duration ran =
      running.process_start ? m_options.clock() - *running.process_start : Clock::duration::zero();
  if (end.exit.succeeded() && running.process_start) {
    m_succeeded_time += ran;
    ++m_succeeded;
  }
  job.state = Done{end.again.has_value(), running.failed_rank, m_stopping};
  m_run_log.record_end(job.id, end.exit, std::chrono::duration_cast<std::chrono::milliseconds>(ran),
                       job.will_rerun(), job.failed_rank());
  m_observer.job_finished(job, end.exit, ran);
  if (end.again) {
    debug_log::step("#{}: {}; back at the queue's head to run again{}", job.id,
                    describe_exit(end.exit), m_stopping ? " in the next run (--resume)" : "");
    m_reruns.push_front(std::move(*end.again));
  }
  m_queue_dirty = true;
}

void Scheduler::step(Clock::time_point now) {
  m_now = now;
  act_on_timers(now);
  // Every other job done, and the services ready (or given up on): the end.
  if (m_services.any() && only_services_left() && !m_services.starting() && nothing_left_to_run())
    if (std::optional<JobId> next = m_services.next_to_tear_down())
      tear_down(m_running.at(*next), now);
  set_aside_refusing_hosts();
  clean_live_hosts();
  // While the journal cannot be written, nothing is taken and nothing starts.
  if (m_unrecorded && !recorded(now)) return;
  look_at_gpus(now);
  bool took = can_take_now();
  if (took) {
    if (m_options.mode == Mode::queue)
      pump_queue(now);
    else
      pump_broadcast(now);
  }
  // One sync makes what executors reported (ends, losses) and the new
  // starts (staged jobs' too) durable together, before any of them can run.
  if ((took || !m_launched.empty()) && !recorded(now)) return;
  start_launched();
}

bool Scheduler::recorded(Clock::time_point now) {
  m_unrecorded = !m_run_log.sync().ok();
  if (m_unrecorded) {
    m_retry_at = now + m_options.retry_interval;
    // Jobs taken but never started end, as not started, once the run stops.
    if (m_stopping)
      for (JobId id : std::exchange(m_launched, {}))
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
        if (!task.exit) m_executors[task.host]->signal_task(task.id, SIGKILL);
      running.kill_at = now + m_options.kill_grace;
    }
  }
  for (std::size_t h = 0; h < m_hosts.size(); ++h) {
    if (m_hosts[h].reconnect_at && now >= *m_hosts[h].reconnect_at) {
      m_hosts[h].reconnect_at.reset();
      m_hosts[h].state = HostState::connecting;
      m_executors[h]->connect();
    }
  }
  if (m_retry_at && now >= *m_retry_at) {
    m_retry_at.reset();
    m_queue_dirty = true;
  }
  take_readiness_steps(now);
  for (const GpuLookGivenUp& look : m_gpu_gates.give_up_overdue(now)) {
    m_queue_dirty = true;
    m_executors[look.host]->signal_task(look.command, SIGKILL);
  }
}

std::optional<Clock::time_point> Scheduler::deadline() const {
  if (can_take_now()) return Clock::time_point::min();
  std::optional<Clock::time_point> due = m_retry_at;
  auto consider = [&](const std::optional<Clock::time_point>& t) {
    if (t && (!due || *t < *due)) due = t;
  };
  for (const auto& [id, job] : m_running) {
    const Running& running = job.running();
    consider(running.kill_at ? running.kill_at : running.deadline);
  }
  consider(m_services.next_due());
  for (std::size_t h = 0; h < m_hosts.size(); ++h) consider(m_hosts[h].reconnect_at);
  consider(m_gpu_gates.next_due(!m_stopping && work_waits()));
  return due;
}

std::optional<std::vector<std::string>> Scheduler::render(const JobSpec& job,
                                                          const Placement& placement,
                                                          const NodeLayout* layout) {
  // Before its master port is chosen, a multi-node job's commands are
  // rendered to see that they can be.
  std::optional<NodeLayout> provisional;
  if (job.nodes && !layout) layout = &provisional.emplace(m_gangs.provisional_layout(placement));
  std::vector<std::string> commands;
  for (std::size_t rank = 0; rank < placement.size(); ++rank) {
    const std::vector<int>& slots = placement[rank];
    Params builtins;
    if (layout) builtins = multi_node_variables(job, *layout, static_cast<int>(rank));
    builtins.insert(builtins.end(), m_services.variables().begin(), m_services.variables().end());
    Result<std::string> command = render_job(job, m_fleet, slots, builtins);
    if (!command) {
      const std::string& host = m_fleet.hosts[m_fleet.slots[slots.front()].host].name;
      report_once(fmt::format("the next job (queue line {}): {}{}; edit the queue to go on",
                              job.line, command.status().message(),
                              command.status().kind() == ErrorKind::undefined
                                  ? " by the job or by host " + host
                                  : std::string()));
      return std::nullopt;
    }
    commands.push_back(std::move(*command));
  }
  return commands;
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
  m_executors[master_host]->survey_network(
      [this, id](const Result<NetworkSurvey>& survey) { staged(id, survey); });
}

void Scheduler::staged(JobId id, const Result<NetworkSurvey>& survey) {
  auto outcome = m_gangs.staged(id, survey);
  if (!outcome) return;
  m_queue_dirty = true;
  if (auto* lost = std::get_if<GangHostLost>(&*outcome)) {
    // Rank 0's host was lost before it answered: nothing ran; the job goes
    // back to the head of the queue, as it was.
    m_slots.release(lost->placement);
    m_reruns.push_front(std::move(lost->job));
    return;
  }
  auto& [job, placement, warnings] = std::get<GangReady>(*outcome);
  for (const std::string& warning : warnings) m_observer.warning(warning);
  auto commands = render(job.spec, placement, &*job.layout);
  if (!commands) {
    // The queue's check rendered them already; only a master port can
    // differ, so this does not happen: end it rather than hold its slots.
    m_slots.release(placement);
    remove_hostfile(m_gangs.ended(job));
    m_observer.warning(fmt::format("#{} could not be rendered with its master port", id));
    return;
  }
  launch(std::move(job), std::move(placement), std::move(*commands), m_options.clock());
  if (m_cancelling) {
    // Interrupted twice while it was staged: recorded, and ended unstarted.
    Job& launched = m_running.at(id);
    launched.running().cancelled = true;
    std::erase(m_launched, id);
    JobExit unstarted = JobExit::not_started_because("the run was stopped");
    for (Task& task : launched.tasks) task.exit = unstarted;
    end_job(id, unstarted);
  }
}

void Scheduler::launch(Job job, Placement placement, std::vector<std::string> commands,
                       Clock::time_point now) {
  for (std::size_t rank = 0; rank < placement.size(); ++rank) {
    Task task;
    task.id = m_next_task_id++;
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
  for (const Task& t : job.tasks) {
    m_slots.hold(t.slots, job.id);
    m_task_job[t.id] = job.id;
  }
  JobId id = job.id;
  Job& launched = m_running.emplace(id, std::move(job)).first->second;
  if (launched.spec.service) m_services.started(launched, now);
  m_run_log.record_launch(job_start_record(m_fleet, launched));
  m_observer.job_launched(launched);
  m_launched.push_back(id);
}

Job Scheduler::new_job(const JobSpec& spec) {
  Job job;
  job.id = m_next_job_id();
  job.spec = spec;
  return job;
}

void Scheduler::start_launched() {
  for (JobId id : std::exchange(m_launched, {})) {
    for (const Task& task : m_running.at(id).tasks)
      m_executors[task.host]->start_task_with(task.id, task.command, task.setup);
  }
}

void Scheduler::report_once(const std::string& message) {
  if (message == m_last_report) return;
  m_last_report = message;
  m_observer.notice(message);
}

}  // namespace runner
