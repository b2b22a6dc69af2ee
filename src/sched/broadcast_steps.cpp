// Broadcast mode's steps (see broadcast_steps.h).
#include "runner/sched/broadcast_steps.h"

#include <fmt/format.h>

#include <sstream>

namespace runner {

namespace {

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> split;
  for (std::string word; in >> word;) split.push_back(word);
  return split;
}

}  // namespace

BroadcastSteps::BroadcastSteps(const Fleet& fleet, const HostTable& hosts,
                               const std::vector<std::unique_ptr<HostOps>>& host_ops,
                               RunObserver& observer, std::function<void(Pushed)> pushed)
    : m_fleet(fleet),
      m_hosts(hosts),
      m_host_ops(host_ops),
      m_observer(observer),
      m_pushed(std::move(pushed)) {}

void BroadcastSteps::push(BroadcastStep step) {
  const JobSpec& spec = step.spec;
  Result<std::vector<PushFile>> files = local_push_files(words(spec.push));
  if (!files) {
    m_observer.warning(fmt::format("queue line {}: push: {}", spec.line, files.status().message()));
    m_failed = true;
    step.commands.clear();
    m_pushed(Pushed{std::move(step), 1});
    return;
  }
  std::vector<int> ready;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h)
    if (m_hosts[h].state == HostState::ready) ready.push_back(static_cast<int>(h));
  std::string to = spec.push_to.empty() ? "." : spec.push_to;
  m_observer.notice(fmt::format("queue line {}: pushing {} file{} to {} host{} into {}",
                                spec.line, files->size(), files->size() == 1 ? "" : "s",
                                ready.size(), ready.size() == 1 ? "" : "s", to));
  m_pushing = Pushing{std::move(step), static_cast<int>(ready.size()), {}};
  for (int host : ready)
    m_host_ops[host]->put_files(
        *files, to, [this, host](const PutResult& result) { host_answered(host, result); });
}

void BroadcastSteps::stop_pushing() {
  if (!pushing()) return;
  for (const auto& ops : m_host_ops) ops->stop_transfers();
}

void BroadcastSteps::host_answered(int host, const PutResult& result) {
  const std::string& name = m_fleet.hosts[host].name;
  if (result.error.empty()) {
    m_observer.notice(fmt::format("push to {}: {}", name, put_summary(result)));
  } else {
    m_observer.warning(fmt::format("push to {} failed: {}", name, result.error));
    m_pushing->failed.insert(host);
  }
  if (--m_pushing->pending > 0) return;
  Pushing done = std::move(*m_pushing);
  m_pushing.reset();
  if (!done.failed.empty()) m_failed = true;
  // A host that got the files and was lost since runs nothing either.
  std::erase_if(done.step.commands, [&](const auto& slot_command) {
    int slot_host = m_fleet.slots[slot_command.first].host;
    return done.failed.count(slot_host) > 0 || m_hosts[slot_host].state != HostState::ready;
  });
  m_pushed(Pushed{std::move(done.step), static_cast<int>(done.failed.size())});
}

}  // namespace runner
