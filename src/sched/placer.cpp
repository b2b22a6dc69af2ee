// Where a job goes (see placer.h).
#include "runner/sched/placer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "runner/sched/slot_allocation.h"

namespace runner {

bool Placer::any_slot_open() const {
  for (int s = 0; s < m_slots.size(); ++s)
    if (m_slots.free(s) && m_hosts[m_fleet.slots[s].host].state == HostState::ready &&
        m_gates.open(s, m_now))
      return true;
  return false;
}

bool Placer::gates_waiting() const {
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h)
    if (m_hosts[h].state == HostState::ready && m_gates.waiting(h, m_now)) return true;
  return false;
}

std::optional<Placement> Placer::place(const JobSpec& job, int avoid, int only_host) const {
  // A multi-node job is put back whole: there is no one slot to avoid.
  if (job.nodes) avoid = -1;
  Placement placement;
  std::vector<int> taken_hosts;
  // Every host but `only_host` is skipped.
  if (only_host >= 0)
    for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h)
      if (h != only_host) taken_hosts.push_back(h);
  for (int rank = 0; rank < job.nodes.value_or(1); ++rank) {
    auto slots = place_on_one_host(job, avoid, taken_hosts);
    if (!slots) return std::nullopt;
    taken_hosts.push_back(m_fleet.slots[slots->front()].host);
    placement.push_back(std::move(*slots));
  }
  return placement;
}

std::optional<std::vector<Placement>> Placer::place_on_every_host(const JobSpec& job) const {
  // Until every host has connected once, it is not known which hosts there
  // are to run on; a host that is being cleaned is ready in a moment.
  if (m_hosts.any(HostState::connecting) || m_hosts.any(HostState::cleaning)) return std::nullopt;
  std::vector<Placement> copies;
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    // A host with fewer slots than the job needs, not counting those that
    // services hold until the run ends, is not one it runs on.
    if (m_hosts[h].state != HostState::ready) continue;
    int slots = 0;
    for (int slot : m_fleet.hosts[h].slots) slots += m_services.runs(m_slots.holder(slot)) ? 0 : 1;
    if (slots < job.slots) continue;
    auto placement = place(job, -1, h);
    if (!placement) return std::nullopt;
    copies.push_back(std::move(*placement));
  }
  if (copies.empty()) return std::nullopt;
  return copies;
}

std::optional<std::vector<int>> Placer::place_on_one_host(
    const JobSpec& job, int avoid, const std::vector<int>& skip_hosts) const {
  std::optional<std::vector<int>> fallback;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h) {
    if (m_hosts[h].state != HostState::ready) continue;
    if (std::find(skip_hosts.begin(), skip_hosts.end(), static_cast<int>(h)) != skip_hosts.end())
      continue;
    const std::vector<int>& slots = m_fleet.hosts[h].slots;
    std::vector<bool> free(slots.size());
    int avoided = -1;  // its position among the host's slots
    for (std::size_t i = 0; i < slots.size(); ++i) {
      free[i] = m_slots.free(slots[i]) && m_gates.open(slots[i], m_now);
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

std::string Placer::why_not_placeable(const JobSpec& job) const {
  int largest = 0;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h)
    if (m_hosts[h].state == HostState::ready)
      largest = std::max<int>(largest, m_fleet.hosts[h].slots.size());
  if (m_services.any() && largest >= job.slots)
    return fmt::format("the next job (queue line {}) needs {} slot{} of one host, and services "
                       "hold those it could use until the run ends; edit the queue (or give "
                       "the services fewer slots) to go on",
                       job.line, job.slots, job.slots == 1 ? "" : "s");
  int hosts = 0;  // usable hosts with the slots each node needs
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h)
    if (m_hosts[h].state == HostState::ready &&
        static_cast<int>(m_fleet.hosts[h].slots.size()) >= job.slots)
      ++hosts;
  int nodes = job.nodes.value_or(1);
  if (nodes > 1 && largest >= job.slots)
    return fmt::format("the next job (queue line {}) needs {} nodes with {} slots each, but {} "
                       "usable host{} that many; edit the queue to go on",
                       job.line, nodes, job.slots, hosts, hosts == 1 ? " has" : "s have");
  return fmt::format("the next job (queue line {}) needs {} slot{} of one host, but the largest "
                     "usable host has {}; edit the queue to go on",
                     job.line, job.slots, job.slots == 1 ? "" : "s", largest);
}

std::string Placer::why_head_waits(const JobSpec& job) const {
  constexpr std::size_t k_hosts_named = 8;
  int nodes = job.nodes.value_or(1);
  int big_enough = 0;  // ready hosts with the slots each node needs
  int not_ready = 0;
  std::vector<std::string> hosts;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h) {
    const std::vector<int>& slots = m_fleet.hosts[h].slots;
    if (m_hosts[h].state != HostState::ready) {
      ++not_ready;
      continue;
    }
    if (static_cast<int>(slots.size()) >= job.slots) ++big_enough;
    int free = 0, held = 0, gated = 0;
    for (int slot : slots) {
      if (!m_slots.free(slot))
        ++held;
      else if (!m_gates.open(slot, m_now))
        ++gated;
      else
        ++free;
    }
    if (hosts.size() == k_hosts_named) continue;
    std::string said = fmt::format("{}: {} of {} free", m_fleet.hosts[h].name, free, slots.size());
    if (held > 0) said += fmt::format(", {} held by {}", held, held == 1 ? "a job" : "jobs");
    if (gated > 0) said += fmt::format(", {} waiting for a free GPU", gated);
    hosts.push_back(std::move(said));
  }
  if (big_enough < nodes) return why_not_placeable(job);
  int ready = static_cast<int>(m_fleet.hosts.size()) - not_ready;
  std::string listed = fmt::format("{}", fmt::join(hosts, "; "));
  if (ready > static_cast<int>(hosts.size()))
    listed += fmt::format("; {} more hosts", ready - static_cast<int>(hosts.size()));
  if (not_ready > 0)
    listed += fmt::format("; {} host{} not ready", not_ready, not_ready == 1 ? "" : "s");
  std::string where = nodes > 1 ? fmt::format("of each of {} hosts", nodes) : "of one host";
  return fmt::format("the next job (queue line {}) needs {} slot{} {}, and too few are free ({})",
                     job.line, job.slots, job.slots == 1 ? "" : "s", where, listed);
}

}  // namespace runner
