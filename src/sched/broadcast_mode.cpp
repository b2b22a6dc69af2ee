// The scheduler's broadcast mode: one job of the queue at a time, run on
// every slot of every ready host, the next once all of it has ended
// (BroadcastSteps holds the step); and a step's `push:`, its files copied
// to every ready host (as `runner push` does) before its command starts on
// the slots of the hosts that got them (a host that did not is a failure of
// the step).
#include <fmt/format.h>

#include <sstream>

#include "runner/sched/scheduler.h"

namespace runner {

namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> split;
  for (std::string word; in >> word;) split.push_back(word);
  return split;
}

}  // namespace

bool Scheduler::next_step_can_begin() const {
  return !m_steps.pushing() && !m_hosts.any(HostState::connecting) &&
         !m_hosts.any(HostState::cleaning) && only_services_left();
}

void Scheduler::pump_broadcast(Clock::time_point now) {
  m_queue_dirty = false;
  if (m_steps.failed() && !m_options.ignore_errors) {
    m_observer.notice("a job failed; stopping (use --ignore-errors to go on)");
    m_stopping = true;
    return;
  }
  if (!m_hosts.any(HostState::ready)) return;
  m_steps.begin();
  // One job per step: it runs on every slot of every ready host.
  std::vector<std::pair<int, std::string>> commands;
  TakeBatch batch = m_source.take_while([&](const JobSpec& job) {
    if (!commands.empty()) return false;
    if (job.nodes || job.every_host) {
      report_once(fmt::format("the next job (queue line {}) has `{}`, but broadcast runs every "
                              "job on each slot alone; edit the queue to go on",
                              job.line, job.nodes ? "nodes:" : "every: host"));
      return false;
    }
    for (std::size_t s = 0; s < m_fleet.slots.size(); ++s) {
      if (m_hosts[m_fleet.slots[s].host].state != HostState::ready) continue;
      auto command = render(job, {{static_cast<int>(s)}});
      if (!command) {
        commands.clear();
        return false;
      }
      commands.emplace_back(static_cast<int>(s), std::move(command->front()));
    }
    return true;
  });
  if (!batch.taken.empty()) {
    m_queue_empty = false;
    m_last_report.clear();
    BroadcastStep step{batch.taken.front(), std::move(commands)};
    if (!step.spec.push.empty())
      push_step(std::move(step));
    else
      launch_step(std::move(step), now);
    return;
  }
  if (std::holds_alternative<HeadNotPlaceable>(batch.stopped)) {
    if (!m_options.daemon) m_unrunnable = true;
    return;
  }
  handle_stop(batch, now);
}

void Scheduler::launch_step(BroadcastStep step, Clock::time_point now) {
  // A step of `push:` alone runs nothing.
  if (step.spec.command.empty()) return;
  for (auto& [slot, command] : step.commands)
    launch(new_job(step.spec), {{slot}}, {std::move(command)}, now);
}

void Scheduler::push_step(BroadcastStep step) {
  const JobSpec& spec = step.spec;
  Result<std::vector<PushFile>> files = local_push_files(words(spec.push));
  if (!files) {
    m_observer.warning(fmt::format("queue line {}: push: {}", spec.line, files.status().message()));
    m_steps.job_failed();
    ++m_failures;
    m_queue_dirty = true;
    return;
  }
  std::vector<int> hosts;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h)
    if (m_hosts[h].state == HostState::ready) hosts.push_back(static_cast<int>(h));
  std::string to = spec.push_to.empty() ? "." : spec.push_to;
  m_observer.notice(fmt::format("queue line {}: pushing {} file{} to {} host{} into {}",
                                spec.line, files->size(), files->size() == 1 ? "" : "s",
                                hosts.size(), hosts.size() == 1 ? "" : "s", to));
  m_steps.push(std::move(step), static_cast<int>(hosts.size()));
  for (int host : hosts)
    m_executors[host]->put_files(*files, to,
                                 [this, host](const PutResult& result) { step_pushed(host, result); });
}

void Scheduler::step_pushed(int host, const PutResult& result) {
  const std::string& name = m_fleet.hosts[host].name;
  if (result.error.empty()) {
    m_observer.notice(fmt::format("push to {}: {}", name, put_summary(result)));
  } else {
    m_observer.warning(fmt::format("push to {} failed: {}", name, result.error));
  }
  std::optional<BroadcastSteps::Pushed> pushed = m_steps.pushed(host, result.error.empty());
  if (!pushed) return;
  m_queue_dirty = true;
  m_failures += pushed->hosts_without_files;
  // Interrupted meanwhile: the command does not start.
  if (m_stopping) return;
  std::erase_if(pushed->step.commands, [&](const auto& slot_command) {
    return m_hosts[m_fleet.slots[slot_command.first].host].state != HostState::ready;
  });
  launch_step(std::move(pushed->step), m_options.clock());
}

}  // namespace runner
