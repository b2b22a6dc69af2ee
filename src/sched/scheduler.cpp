#include "runner/sched/scheduler.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>

#include "runner/config/job_render.h"
#include "runner/config/template.h"
#include "runner/exec/shell.h"
#include "runner/sched/slot_allocation.h"

namespace runner {

namespace {

// Marks a slot promised to a job that is being taken from the queue.
constexpr JobId k_reserved = ~JobId{0};
bool permanent(const TransportError& error) {
  return error.kind == TransportErrorKind::auth || error.kind == TransportErrorKind::host_key;
}

}  // namespace

Scheduler::Scheduler(const Fleet& fleet, std::vector<HostTransport*> transports, JobSource& source,
                     RunObserver& observer, SchedulerOptions options,
                     std::function<JobId()> next_job_id)
    : m_fleet(fleet),
      m_transports(std::move(transports)),
      m_source(source),
      m_observer(observer),
      m_options(options),
      m_next_job_id(std::move(next_job_id)),
      m_host_state(fleet.hosts.size(), HostState::connecting),
      m_host_was_ready(fleet.hosts.size(), false),
      m_reconnect_tries(fleet.hosts.size(), 0),
      m_reconnect_at(fleet.hosts.size()),
      m_leftover_groups(fleet.hosts.size()),
      m_orphans(fleet.hosts.size()),
      m_start_refusal(fleet.hosts.size()),
      m_slot_job(fleet.slots.size(), 0) {}

void Scheduler::adopt_orphans(std::vector<OrphanJob> orphans) {
  for (OrphanJob& orphan : orphans) {
    if (orphan.host >= 0 && orphan.pgid > 0) {
      m_orphans[orphan.host].push_back(std::move(orphan));
      continue;
    }
    if (orphan.was_running)
      m_observer.warning(
          orphan.host < 0
              ? fmt::format(
                    "job #{} ran on a host that is no longer in the hosts file; if it still "
                    "runs there, stop it by hand",
                    orphan.id)
              : fmt::format("job #{} had not reported its process group on {}; if it still runs "
                            "there, stop it by hand",
                            orphan.id, m_fleet.hosts[orphan.host].name));
    rerun_orphan(std::move(orphan));
  }
}

void Scheduler::rerun_orphan(OrphanJob orphan) {
  if (m_options.mode == Mode::broadcast) {
    m_observer.warning(fmt::format(
        "job #{} was one slot's share of a broadcast step; broadcast steps are not run again "
        "(it is in consumed.yaml)",
        orphan.id));
    return;
  }
  m_reruns.push_back(Rerun{orphan.id, std::move(orphan.spec), orphan.attempt + 1, orphan.requeues});
}

void Scheduler::start() {
  for (HostTransport* transport : m_transports) transport->connect();
}

void Scheduler::stop_scheduling() {
  if (m_stopping) return;
  m_stopping = true;
  m_interrupted = true;
}

void Scheduler::cancel_running(Clock::time_point now) {
  stop_scheduling();
  for (auto& [id, job] : m_running) {
    job.cancelled = true;
    if (!job.kill_at) stop_job(job, now);
  }
}

bool Scheduler::finished() const {
  if (!m_running.empty()) return false;
  if (m_stopping || m_unrunnable) return true;
  if (any_host(HostState::connecting) || any_host(HostState::cleaning)) return false;
  bool work_left = !m_reruns.empty() || !m_queue_empty || m_queue_dirty;
  if (!any_host(HostState::ready)) return !any_host(HostState::reconnecting) || !work_left;
  if (m_options.daemon) return false;
  return m_reruns.empty() && m_queue_empty && !m_queue_dirty;
}

int Scheduler::exit_code() const {
  if (m_interrupted) return 130;
  if (m_failures > 0 || m_unrunnable) return 1;
  if (!m_reruns.empty()) return 1;
  if (!any_host(HostState::ready) && !m_queue_empty) return 1;
  return 0;
}

void Scheduler::host_ready(int host) {
  m_host_was_ready[host] = true;
  m_reconnect_tries[host] = 0;
  if (!m_leftover_groups[host].empty() || !m_orphans[host].empty()) {
    m_host_state[host] = HostState::cleaning;
    clean_host(host);
    return;
  }
  m_host_state[host] = HostState::ready;
  m_observer.host_ready(m_fleet.hosts[host]);
  m_queue_dirty = true;
}

void Scheduler::host_failed(int host, const TransportError& error) {
  if (m_host_state[host] == HostState::set_aside) return;  // said once; stays aside
  bool was_ready = m_host_was_ready[host];
  bool retry = was_ready && !permanent(error) && !m_stopping &&
               (m_options.daemon || m_reconnect_tries[host] < m_options.reconnect_tries);
  if (retry) {
    Clock::duration wait = reconnect_delay(m_reconnect_tries[host]++);
    m_host_state[host] = HostState::reconnecting;
    m_reconnect_at[host] = m_options.clock() + wait;
    m_observer.host_reconnecting(m_fleet.hosts[host], error, wait);
  } else {
    m_observer.host_failed(m_fleet.hosts[host], error);
    m_host_state[host] = HostState::failed;
    requeue_orphans(host, "its host could not be reached to check on it");
    // In broadcast mode every job was meant to run on this host too.
    if (m_options.mode == Mode::broadcast) ++m_failures;
  }
  m_queue_dirty = true;
}

void Scheduler::job_started(JobId id, long pgid) {
  auto it = m_running.find(id);
  if (it == m_running.end()) return;
  RunningJob& job = it->second;
  job.pgid = pgid;
  job.process_start = m_options.clock();
  if (auto timeout = job.spec.timeout ? job.spec.timeout : m_options.default_timeout)
    if (!job.kill_at) job.deadline = *job.process_start + *timeout;
  m_observer.job_pgid(job);
}

void Scheduler::signal_failed(JobId id, int signal, const std::string& why) {
  auto it = m_running.find(id);
  std::string job = it == m_running.end() ? fmt::format("#{}", id)
                                          : fmt::format("#{} [{}]", id, it->second.label);
  m_observer.warning(fmt::format("{} could not send SIG{} to its process group: {}", job,
                                 signal_name(signal), why));
}

void Scheduler::job_output(JobId id, OutputStream stream, std::string_view bytes) {
  auto it = m_running.find(id);
  if (it != m_running.end()) m_observer.job_output(it->second, stream, bytes);
}

void Scheduler::job_exited(JobId id, const JobExit& reported) {
  auto it = m_running.find(id);
  if (it == m_running.end()) return;
  RunningJob job = std::move(it->second);
  m_running.erase(it);
  for (int slot : job.slots) m_slot_job[slot] = 0;

  JobExit exit = reported;
  exit.timed_out = job.timed_out && !job.cancelled;
  exit.cancelled = job.cancelled;
  int retries = job.spec.retries.value_or(m_options.default_retries);
  Rerun rerun{job.id,       job.spec,         job.attempt + 1,
              job.requeues, job.retries_used, job.start_failures};
  if (exit.lost && job.pgid > 0 && !m_options.keep_orphans)
    m_leftover_groups[job.host].push_back(job.pgid);
  bool cannot_start = false;  // anywhere: it is not tried again
  if (exit.not_started && !exit.timed_out && !exit.cancelled) {
    if (m_start_refusal[job.host].empty()) m_start_refusal[job.host] = exit.error;
    if (can_restart(job)) {
      // Nothing ran: the same attempt, at the head of the queue.
      rerun.attempt = job.attempt;
      ++rerun.start_failures;
      job.will_rerun = true;
    } else if (m_options.mode == Mode::queue) {
      cannot_start = true;
      exit.error +=
          fmt::format(" (it could not start {} times; not tried again)", job.start_failures + 1);
    }
  }
  // Broadcast steps run in lockstep on every slot: a step is never redone.
  if (m_options.mode == Mode::queue && !job.will_rerun && !cannot_start && !exit.succeeded() &&
      !exit.cancelled && !m_stopping) {
    if (exit.lost && job.requeues < m_options.max_requeue) {
      ++rerun.requeues;
      job.will_rerun = true;
    } else if (!exit.lost && job.retries_used < retries) {
      ++rerun.retries_used;
      rerun.avoid_slot = job.slots.front();
      job.will_rerun = true;
    }
  }
  if (!exit.succeeded() && !job.will_rerun) {
    ++m_failures;
    m_step_failed = true;
  }
  Clock::duration ran =
      job.process_start ? m_options.clock() - *job.process_start : Clock::duration::zero();
  m_observer.job_finished(job, exit, ran);
  if (job.will_rerun) m_reruns.push_front(std::move(rerun));
  m_queue_dirty = true;
}

void Scheduler::step(Clock::time_point now) {
  m_now = now;
  act_on_timers(now);
  set_aside_refusing_hosts();
  clean_live_hosts();
  // While the journal cannot be written, nothing is taken and nothing starts.
  if (m_unrecorded && !recorded(now)) return;
  if (can_take_now()) {
    if (m_options.mode == Mode::queue)
      pump_queue(now);
    else
      pump_broadcast(now);
    // One sync makes what transports reported (ends, losses) and the new
    // starts durable together, before any of the new jobs can run.
    if (!recorded(now)) return;
  }
  start_launched();
}

bool Scheduler::recorded(Clock::time_point now) {
  m_unrecorded = !m_observer.checkpoint().ok();
  if (m_unrecorded) {
    m_retry_at = now + m_options.retry_interval;
    // Jobs taken but never started end, as not started, once the run stops.
    if (m_stopping)
      for (JobId id : std::exchange(m_launched, {}))
        job_exited(id, JobExit{.error = "not started: the journal could not be written"});
  }
  return !m_unrecorded;
}

void Scheduler::act_on_timers(Clock::time_point now) {
  for (auto& [id, job] : m_running) {
    if (job.deadline && now >= *job.deadline && !job.kill_at) {
      job.timed_out = true;
      std::string timeout = job.spec.timeout_text.empty() ? "its timeout" : job.spec.timeout_text;
      m_observer.warning(
          job.process_start
              ? fmt::format("#{} [{}] timed out after {}; stopping it", id, job.label, timeout)
              : fmt::format("#{} [{}] did not start within {} plus {:.0f}s for its host's login "
                            "shell; stopping it",
                            id, job.label, timeout,
                            std::chrono::duration<double>(m_options.start_allowance).count()));
      stop_job(job, now);
    } else if (job.kill_at && now >= *job.kill_at) {
      m_transports[job.host]->signal_job(id, SIGKILL);
      job.kill_at = now + m_options.kill_grace;
    }
  }
  for (std::size_t h = 0; h < m_reconnect_at.size(); ++h) {
    if (m_reconnect_at[h] && now >= *m_reconnect_at[h]) {
      m_reconnect_at[h].reset();
      m_host_state[h] = HostState::connecting;
      m_transports[h]->connect();
    }
  }
  if (m_retry_at && now >= *m_retry_at) {
    m_retry_at.reset();
    m_queue_dirty = true;
  }
}

std::optional<Clock::time_point> Scheduler::deadline() const {
  if (can_take_now()) return Clock::time_point::min();
  std::optional<Clock::time_point> due = m_retry_at;
  auto consider = [&](const std::optional<Clock::time_point>& t) {
    if (t && (!due || *t < *due)) due = t;
  };
  for (const auto& [id, job] : m_running) consider(job.kill_at ? job.kill_at : job.deadline);
  for (const auto& at : m_reconnect_at) consider(at);
  return due;
}

bool Scheduler::can_take_now() const {
  if (m_stopping || m_unrecorded || !m_queue_dirty) return false;
  if (m_options.mode == Mode::broadcast)
    return !any_host(HostState::connecting) && !any_host(HostState::cleaning) && m_running.empty();
  for (std::size_t s = 0; s < m_slot_job.size(); ++s)
    if (m_slot_job[s] == 0 && m_host_state[m_fleet.slots[s].host] == HostState::ready) return true;
  return false;
}

bool Scheduler::pump_reruns(Clock::time_point now) {
  while (!m_reruns.empty()) {
    Rerun& rerun = m_reruns.front();
    auto slots = place(rerun.spec, rerun.avoid_slot);
    if (!slots) return false;
    std::string command;
    if (!render(rerun.spec, *slots, &command)) return false;
    Rerun taken = std::move(rerun);
    m_reruns.pop_front();
    launch(taken.spec, std::move(*slots), std::move(command), now, &taken);
  }
  return true;
}

void Scheduler::pump_queue(Clock::time_point now) {
  m_queue_dirty = false;
  if (!pump_reruns(now)) return;  // FIFO: the queue file waits behind them
  // Jobs the queue lets us take, each with the slots reserved for it.
  struct Placement {
    std::vector<int> slots;
    std::string command;
  };
  std::vector<Placement> placements;
  bool rendered_ok = true;
  TakeBatch batch = m_source.take_while([&](const JobSpec& job) {
    auto slots = place(job);
    if (!slots) return false;
    std::string command;
    rendered_ok = render(job, *slots, &command);
    if (!rendered_ok) return false;
    for (int slot : *slots) m_slot_job[slot] = k_reserved;
    placements.push_back({std::move(*slots), std::move(command)});
    return true;
  });
  for (std::size_t i = batch.taken.size(); i < placements.size(); ++i)
    for (int slot : placements[i].slots) m_slot_job[slot] = 0;  // not taken after all
  if (!batch.taken.empty()) {
    m_queue_empty = false;
    m_last_report.clear();
  }
  for (std::size_t i = 0; i < batch.taken.size(); ++i)
    launch(batch.taken[i], std::move(placements[i].slots), std::move(placements[i].command), now);

  if (auto* head = std::get_if<HeadNotPlaceable>(&batch.stopped)) {
    m_queue_empty = false;
    bool nothing_will_free = m_running.empty() && !any_host(HostState::connecting) &&
                             !any_host(HostState::cleaning) && !any_host(HostState::reconnecting);
    if (!rendered_ok || nothing_will_free) {
      // Nothing will change until the user edits the queue.
      if (rendered_ok) {
        int largest = 0;
        for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h)
          if (m_host_state[h] == HostState::ready)
            largest = std::max<int>(largest, m_fleet.hosts[h].slots.size());
        report_once(fmt::format(
            "the next job (queue line {}) needs {} slots of one host, but the largest usable "
            "host has {}; edit the queue to go on",
            head->job.line, head->job.slots, largest));
      }
      if (!m_options.daemon) m_unrunnable = true;
    }
    return;
  }
  handle_stop(batch, now);
}

void Scheduler::pump_broadcast(Clock::time_point now) {
  m_queue_dirty = false;
  if (m_step_failed && !m_options.ignore_errors) {
    m_observer.notice("a job failed; stopping (use --ignore-errors to go on)");
    m_stopping = true;
    return;
  }
  if (!any_host(HostState::ready)) return;
  m_step_failed = false;
  // One job per step: it runs on every slot of every ready host.
  std::vector<std::pair<int, std::string>> commands;
  TakeBatch batch = m_source.take_while([&](const JobSpec& job) {
    if (!commands.empty()) return false;
    for (std::size_t s = 0; s < m_fleet.slots.size(); ++s) {
      if (m_host_state[m_fleet.slots[s].host] != HostState::ready) continue;
      std::string command;
      if (!render(job, {static_cast<int>(s)}, &command)) {
        commands.clear();
        return false;
      }
      commands.emplace_back(static_cast<int>(s), std::move(command));
    }
    return true;
  });
  if (!batch.taken.empty()) {
    m_queue_empty = false;
    m_last_report.clear();
    for (auto& [slot, command] : commands)
      launch(batch.taken.front(), {slot}, std::move(command), now);
    return;
  }
  if (std::holds_alternative<HeadNotPlaceable>(batch.stopped)) {
    if (!m_options.daemon) m_unrunnable = true;
    return;
  }
  handle_stop(batch, now);
}

void Scheduler::handle_stop(const TakeBatch& batch, Clock::time_point now) {
  if (std::holds_alternative<QueueEmpty>(batch.stopped)) {
    if (batch.taken.empty()) {
      m_queue_empty = true;
      m_last_report.clear();
    }
    return;
  }
  if (const auto* unavailable = std::get_if<QueueUnavailable>(&batch.stopped)) {
    m_queue_empty = false;
    report_once(
        unavailable->parse_error
            ? fmt::format("{}; fix the file, the run goes on when it parses", unavailable->reason)
            : fmt::format("queue {}; waiting", unavailable->reason));
    m_retry_at = now + m_options.retry_interval;
  }
}

std::optional<std::vector<int>> Scheduler::place(const JobSpec& job, int avoid) const {
  std::optional<std::vector<int>> fallback;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h) {
    if (m_host_state[h] != HostState::ready) continue;
    const std::vector<int>& slots = m_fleet.hosts[h].slots;
    std::vector<bool> free(slots.size());
    int avoided = -1;  // its position among the host's slots
    for (std::size_t i = 0; i < slots.size(); ++i) {
      free[i] = m_slot_job[slots[i]] == 0;
      if (free[i] && slots[i] == avoid) {
        free[i] = false;
        avoided = static_cast<int>(i);
      }
    }
    // The chosen positions among the host's slots, as slot ids.
    auto ids = [&](const std::vector<int>& positions) {
      std::vector<int> placed;
      for (int i : positions) placed.push_back(slots[i]);
      return placed;
    };
    if (auto chosen = choose_slots(free, job.slots, job.allocation)) return ids(*chosen);
    if (avoided < 0 || fallback) continue;
    free[avoided] = true;
    if (auto chosen = choose_slots(free, job.slots, job.allocation)) fallback = ids(*chosen);
  }
  return fallback;
}

bool Scheduler::render(const JobSpec& job, const std::vector<int>& slots, std::string* command) {
  try {
    *command = render_job(job, m_fleet, slots);
    return true;
  } catch (const UndefinedVariable& undefined) {
    report_once(fmt::format(
        "the next job (queue line {}) uses <<{}>>, which neither the job nor host {} defines; "
        "edit the queue to go on",
        job.line, undefined.name, m_fleet.hosts[m_fleet.slots[slots.front()].host].name));
    return false;
  } catch (const TemplateError& error) {
    report_once(fmt::format("the next job (queue line {}): {}; edit the queue to go on", job.line,
                            error.message));
    return false;
  }
}

void Scheduler::launch(const JobSpec& job, std::vector<int> slots, std::string command,
                       Clock::time_point now, const Rerun* rerun) {
  RunningJob running;
  running.id = rerun ? rerun->id : m_next_job_id();
  running.spec = job;
  running.command = std::move(command);
  running.host = m_fleet.slots[slots.front()].host;
  running.label = slots_label(m_fleet, slots);
  running.slots = std::move(slots);
  running.start = now;
  if (rerun) {
    running.attempt = rerun->attempt;
    running.requeues = rerun->requeues;
    running.retries_used = rerun->retries_used;
    running.start_failures = rerun->start_failures;
  }
  // Its timeout counts from its process's start (job_started); until then
  // the bound is on the start itself.
  if (auto timeout = job.timeout ? job.timeout : m_options.default_timeout)
    running.deadline = now + *timeout + m_options.start_allowance;
  for (int slot : running.slots) m_slot_job[slot] = running.id;
  JobId id = running.id;
  m_observer.job_started(m_running.emplace(id, std::move(running)).first->second);
  m_launched.push_back(id);
}

void Scheduler::start_launched() {
  for (JobId id : std::exchange(m_launched, {})) {
    const RunningJob& job = m_running.at(id);
    m_transports[job.host]->start_job(id, job.command);
  }
}

void Scheduler::stop_job(RunningJob& job, Clock::time_point now) {
  if (!job.spec.cancel.empty()) {
    try {
      std::string command = render_for_job(job.spec.cancel, job.spec, m_fleet, job.slots);
      JobId id = job.id;
      m_transports[job.host]->run_command(
          command, [this, id](const JobExit& exit, const std::string& output) {
            if (!exit.succeeded())
              m_observer.warning(fmt::format("the cancel command of #{} failed{}{}", id,
                                             output.empty() ? "" : ": ", output));
          });
    } catch (const UndefinedVariable& undefined) {
      m_observer.warning(fmt::format("#{}: its cancel command uses <<{}>>, which is not defined",
                                     job.id, undefined.name));
    } catch (const TemplateError& error) {
      m_observer.warning(fmt::format("#{}: its cancel command: {}", job.id, error.message));
    }
  }
  m_transports[job.host]->signal_job(job.id, SIGTERM);
  job.kill_at = now + m_options.kill_grace;
}

void Scheduler::clean_live_hosts() {
  // A job lost alone (its channel broke, the host did not) may still run
  // there while it is rerun elsewhere: kill its group now. Lost with their
  // host, groups wait for the host to come back (host_ready).
  for (std::size_t host = 0; host < m_host_state.size(); ++host) {
    if (m_host_state[host] != HostState::ready || m_leftover_groups[host].empty()) continue;
    m_host_state[host] = HostState::cleaning;
    clean_host(static_cast<int>(host));
  }
}

void Scheduler::clean_host(int host) {
  // The losses are on disk before their leftovers are killed; if the journal
  // cannot be written, the observer has said so, and the kill goes ahead.
  static_cast<void>(m_observer.checkpoint());
  std::vector<long> groups = std::exchange(m_leftover_groups[host], {});
  std::vector<OrphanJob> orphans = std::exchange(m_orphans[host], {});
  for (const OrphanJob& orphan : orphans) groups.push_back(orphan.pgid);
  const std::string& name = m_fleet.hosts[host].name;
  m_transports[host]->kill_leftovers(
      groups, [this, host, name, orphans = std::move(orphans)](const LeftoverCheck& check) mutable {
        if (!check.error.empty() && !check.lost)
          m_observer.warning(
              fmt::format("{}: could not check for leftover processes: {}", name, check.error));
        std::size_t killed = check.killed.size();
        if (killed > 0)
          m_observer.notice(fmt::format("{}: killed {} leftover process group{} of lost jobs", name,
                                        killed, killed == 1 ? "" : "s"));
        for (OrphanJob& orphan : orphans) rerun_orphan(std::move(orphan));
        if (check.lost) return;  // host_failed has decided what comes next
        m_host_state[host] = HostState::ready;
        m_observer.host_ready(m_fleet.hosts[host]);
        m_queue_dirty = true;
      });
}

void Scheduler::requeue_orphans(int host, const std::string& why) {
  for (OrphanJob& orphan : std::exchange(m_orphans[host], {})) {
    m_observer.warning(fmt::format("job #{} (process group {} on {}): {}", orphan.id, orphan.pgid,
                                   m_fleet.hosts[host].name, why));
    rerun_orphan(std::move(orphan));
  }
}

bool Scheduler::can_restart(const RunningJob& job) const {
  // Each time it cannot start, its host is set aside: more failures than
  // hosts mean it cannot start anywhere.
  if (job.start_failures >= static_cast<int>(m_fleet.hosts.size())) return false;
  return m_options.mode == Mode::queue;
}

void Scheduler::set_aside_refusing_hosts() {
  for (std::size_t host = 0; host < m_host_state.size(); ++host) {
    std::string reason = std::exchange(m_start_refusal[host], {});
    // A host that failed meanwhile is reconnected or given up as usual.
    if (reason.empty() || m_host_state[host] != HostState::ready) continue;
    m_host_state[host] = HostState::set_aside;
    m_observer.host_failed(
        m_fleet.hosts[host],
        TransportError{TransportErrorKind::protocol,
                       fmt::format("{}: set aside for the rest of this run, as a job could not "
                                   "start there ({}); its jobs go to the other hosts. Fix it, then "
                                   "run runner again",
                                   m_fleet.hosts[host].name, reason)});
    m_queue_dirty = true;
  }
  bool usable = any_host(HostState::ready) || any_host(HostState::connecting) ||
                any_host(HostState::cleaning) || any_host(HostState::reconnecting);
  if (usable || !any_host(HostState::set_aside) || m_stopping) return;
  if (!m_reruns.empty())
    report_once(fmt::format(
        "no usable host is left: {} job{} that could not start wait{} for `runner queue "
        "--resume`; the queue file keeps the rest",
        m_reruns.size(), m_reruns.size() == 1 ? "" : "s", m_reruns.size() == 1 ? "s" : ""));
  else if (!m_queue_empty)
    report_once("no usable host is left: the queue file keeps the jobs that did not run");
}

void Scheduler::report_once(const std::string& message) {
  if (message == m_last_report) return;
  m_last_report = message;
  m_observer.notice(message);
}

bool Scheduler::any_host(HostState state) const {
  return std::find(m_host_state.begin(), m_host_state.end(), state) != m_host_state.end();
}

Clock::duration Scheduler::reconnect_delay(int tries) {
  auto wait = m_options.reconnect_first;
  for (int i = 0; i < tries && wait < m_options.reconnect_longest; ++i) wait *= 2;
  wait = std::min(wait, m_options.reconnect_longest);
  // Jitter: between half and all of it, so hosts that fell together do not
  // come back in one burst.
  std::uniform_real_distribution<double> share(0.5, 1.0);
  return std::chrono::duration_cast<Clock::duration>(wait * share(m_random));
}

}  // namespace runner
