#include "runner/sched/scheduler.h"

#include <signal.h>

#include <algorithm>

#include <fmt/format.h>

#include "runner/config/job_render.h"
#include "runner/config/template.h"

namespace runner {

namespace {

// Marks a slot promised to a job that is being taken from the queue.
constexpr JobId k_reserved = ~JobId{0};

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
      m_slot_job(fleet.slots.size(), 0) {}

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
  if (m_kill_at) return;
  for (auto& [id, job] : m_running) m_transports[job.host]->signal_job(id, SIGTERM);
  m_kill_at = now + m_options.kill_grace;
}

bool Scheduler::finished() const {
  if (!m_running.empty()) return false;
  if (m_stopping || m_unrunnable) return true;
  if (any_host_connecting()) return false;
  if (!any_host_ready()) return true;
  if (m_options.daemon) return false;
  return m_queue_empty && !m_queue_dirty;
}

int Scheduler::exit_code() const {
  if (m_interrupted) return 130;
  if (m_failures > 0 || m_unrunnable) return 1;
  if (!any_host_ready() && !m_queue_empty) return 1;
  return 0;
}

void Scheduler::host_ready(int host) {
  m_host_state[host] = HostState::ready;
  m_observer.host_ready(m_fleet.hosts[host]);
  m_queue_dirty = true;
}

void Scheduler::host_failed(int host, const TransportError& error) {
  m_host_state[host] = HostState::failed;
  m_observer.host_failed(m_fleet.hosts[host], error);
  // In broadcast mode every job was meant to run on this host too.
  if (m_options.mode == Mode::broadcast) ++m_failures;
  m_queue_dirty = true;
}

void Scheduler::job_started(JobId id, long pgid) {
  auto it = m_running.find(id);
  if (it == m_running.end()) return;
  it->second.pgid = pgid;
  m_observer.job_pgid(it->second);
}

void Scheduler::job_output(JobId id, OutputStream stream, std::string_view bytes) {
  auto it = m_running.find(id);
  if (it != m_running.end()) m_observer.job_output(it->second, stream, bytes);
}

void Scheduler::job_exited(JobId id, const JobExit& exit) {
  auto it = m_running.find(id);
  if (it == m_running.end()) return;
  RunningJob job = std::move(it->second);
  m_running.erase(it);
  for (int slot : job.slots) m_slot_job[slot] = 0;
  if (!exit.succeeded()) {
    ++m_failures;
    m_step_failed = true;
  }
  m_observer.job_finished(job, exit, Clock::now() - job.start);
  m_queue_dirty = true;
}

void Scheduler::step(Clock::time_point now) {
  if (m_kill_at && now >= *m_kill_at) {
    for (auto& [id, job] : m_running) m_transports[job.host]->signal_job(id, SIGKILL);
    m_kill_at = now + m_options.kill_grace;
  }
  if (m_retry_at && now >= *m_retry_at) {
    m_retry_at.reset();
    m_queue_dirty = true;
  }
  if (!can_take_now()) return;
  if (m_options.mode == Mode::queue)
    pump_queue(now);
  else
    pump_broadcast(now);
}

std::optional<Clock::time_point> Scheduler::deadline() const {
  if (can_take_now()) return Clock::time_point::min();
  if (m_kill_at && !m_running.empty()) return m_kill_at;
  return m_retry_at;
}

bool Scheduler::can_take_now() const {
  if (m_stopping || !m_queue_dirty) return false;
  if (m_options.mode == Mode::broadcast) return !any_host_connecting() && m_running.empty();
  for (std::size_t s = 0; s < m_slot_job.size(); ++s)
    if (m_slot_job[s] == 0 && m_host_state[m_fleet.slots[s].host] == HostState::ready) return true;
  return false;
}

void Scheduler::pump_queue(Clock::time_point now) {
  m_queue_dirty = false;
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
    if (!rendered_ok || (m_running.empty() && !any_host_connecting())) {
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
  if (!any_host_ready()) return;
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
    for (auto& [slot, command] : commands) launch(batch.taken.front(), {slot}, std::move(command), now);
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
    report_once(unavailable->parse_error
                    ? fmt::format("{}; fix the file, the run goes on when it parses",
                                  unavailable->reason)
                    : fmt::format("queue {}; waiting", unavailable->reason));
    m_retry_at = now + m_options.retry_interval;
  }
}

std::optional<std::vector<int>> Scheduler::place(const JobSpec& job) const {
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h) {
    if (m_host_state[h] != HostState::ready) continue;
    std::vector<int> free;
    for (int slot : m_fleet.hosts[h].slots)
      if (m_slot_job[slot] == 0) free.push_back(slot);
    if (static_cast<int>(free.size()) >= job.slots) {
      free.resize(job.slots);
      return free;
    }
  }
  return std::nullopt;
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
  }
}

void Scheduler::launch(const JobSpec& job, std::vector<int> slots, std::string command,
                       Clock::time_point now) {
  RunningJob running;
  running.id = m_next_job_id();
  running.spec = job;
  running.command = std::move(command);
  running.host = m_fleet.slots[slots.front()].host;
  running.label = label_for(slots);
  running.slots = std::move(slots);
  running.start = now;
  for (int slot : running.slots) m_slot_job[slot] = running.id;
  JobId id = running.id;
  HostTransport* transport = m_transports[running.host];
  const std::string& text = m_running.emplace(id, std::move(running)).first->second.command;
  m_observer.job_started(m_running.at(id));
  transport->start_job(id, text);
}

void Scheduler::report_once(const std::string& message) {
  if (message == m_last_report) return;
  m_last_report = message;
  m_observer.notice(message);
}

bool Scheduler::any_host_connecting() const {
  return std::find(m_host_state.begin(), m_host_state.end(), HostState::connecting) !=
         m_host_state.end();
}

bool Scheduler::any_host_ready() const {
  return std::find(m_host_state.begin(), m_host_state.end(), HostState::ready) !=
         m_host_state.end();
}

std::string Scheduler::label_for(const std::vector<int>& slots) const {
  if (slots.size() == 1) return m_fleet.slots[slots.front()].label;
  const Slot& first = m_fleet.slots[slots.front()];
  std::string label = m_fleet.hosts[first.host].name;
  if (first.params.empty()) {
    std::vector<std::string> indices;
    for (int s : slots) indices.push_back(std::to_string(m_fleet.slots[s].index));
    return fmt::format("{} #{}", label, fmt::join(indices, ","));
  }
  for (const auto& [key, value] : first.params) {
    std::vector<std::string> values;
    for (int s : slots) values.push_back(find_param(m_fleet.slots[s].params, key).value_or("?"));
    label += fmt::format(" {}={}", key, fmt::join(values, ","));
  }
  return label;
}

}  // namespace runner
