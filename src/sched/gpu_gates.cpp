// The GPU gates of `gpu_free:` slots (see gpu_gates.h). A look is fresh for
// k_fresh: a job starts only on what the GPU held that recently; a busy GPU
// is looked at again every k_recheck, not at every step, as each look runs
// nvidia-smi on its host.
#include "runner/sched/gpu_gates.h"

#include <fmt/format.h>

namespace runner {

namespace {

// How old a look may be for a job to start on it.
constexpr auto k_fresh = std::chrono::seconds(2);
// How soon a busy GPU is looked at again.
constexpr auto k_recheck = std::chrono::seconds(5);

}  // namespace

GpuGates::GpuGates(const Fleet& fleet, const SlotBook& slots, Mode mode)
    : m_fleet(fleet),
      m_slots(slots),
      m_enforced(mode == Mode::queue),
      m_gates(fleet.slots.size()),
      m_hosts(fleet.hosts.size()) {}

bool GpuGates::gated(int slot) const {
  return m_enforced && m_fleet.slots[slot].gpu_free.has_value();
}

bool GpuGates::open(int slot, Clock::time_point now) const {
  if (!gated(slot)) return true;
  if (m_slots.gpu_held_through_another_slot(slot)) return false;
  if (m_hosts[m_fleet.slots[slot].host].broken) return true;
  const Gate& gate = m_gates[slot];
  return gate.state == Gate::State::free && now - gate.checked_at <= k_fresh;
}

bool GpuGates::waiting(int host, Clock::time_point now) const {
  for (int slot : m_fleet.hosts[host].slots)
    if (m_slots.free(slot) && !open(slot, now)) return true;
  return false;
}

std::optional<Clock::time_point> GpuGates::due(int host) const {
  if (m_hosts[host].look || m_hosts[host].broken) return std::nullopt;
  std::optional<Clock::time_point> due;
  for (int slot : m_fleet.hosts[host].slots) {
    if (!gated(slot) || !m_slots.free(slot) || m_slots.gpu_held_through_another_slot(slot))
      continue;
    const Gate& gate = m_gates[slot];
    Clock::time_point at = gate.state == Gate::State::busy   ? gate.checked_at + k_recheck
                           : gate.state == Gate::State::free ? gate.checked_at + k_fresh
                                                             : Clock::time_point::min();
    if (!due || at < *due) due = at;
  }
  return due;
}

void GpuGates::look_begins(int host, Clock::time_point give_up_at) {
  m_hosts[host].look = HostLooks::Look{0, give_up_at};
}

void GpuGates::look_runs_as(int host, TaskId command) {
  if (m_hosts[host].look) m_hosts[host].look->command = command;
}

bool GpuGates::look_ends(int host) {
  if (!m_hosts[host].look) return false;
  m_hosts[host].look.reset();
  return true;
}

std::optional<Clock::time_point> GpuGates::give_up_at(int host) const {
  const std::optional<HostLooks::Look>& look = m_hosts[host].look;
  return look ? std::optional(look->give_up_at) : std::nullopt;
}

std::optional<TaskId> GpuGates::give_up_if_overdue(int host, Clock::time_point now) {
  std::optional<HostLooks::Look>& look = m_hosts[host].look;
  if (!look || now < look->give_up_at) return std::nullopt;
  TaskId command = look->command;
  look.reset();  // its end, when it comes, is not looked at
  return command;
}

std::vector<std::string> GpuGates::record(int host, const std::map<std::string, GpuUsage>& usage,
                                          Clock::time_point now) {
  std::vector<std::string> said;
  for (int slot : m_fleet.hosts[host].slots) {
    const Slot& where = m_fleet.slots[slot];
    if (!where.gpu_free || !m_slots.free(slot)) continue;
    Gate& gate = m_gates[slot];
    std::optional<std::string> gpu = find_param(where.params, "gpu");
    std::optional<std::string> busy;
    if (!gpu) {
      busy = "it has no `gpu` parameter to look at";
    } else if (auto it = usage.find(*gpu); it == usage.end()) {
      busy = fmt::format("nvidia-smi does not list GPU {}", *gpu);
    } else {
      busy = gpu_busy_reason(*where.gpu_free, it->second);
    }
    Gate::State was = gate.state;
    gate.state = busy ? Gate::State::busy : Gate::State::free;
    gate.checked_at = now;
    if (busy && (was != Gate::State::busy || gate.why != *busy))
      said.push_back(fmt::format("{}: its GPU is not free ({}; gpu_free: {}); jobs wait for it",
                                 where.label, *busy, where.gpu_free->text));
    else if (!busy && was == Gate::State::busy)
      said.push_back(fmt::format("{}: its GPU is free again", where.label));
    gate.why = busy.value_or("");
  }
  return said;
}

}  // namespace runner
