// The GPU gates of `gpu_free:` slots and the looks at their GPUs (see
// gpu_gates.h). A look is fresh for
// k_fresh: a job starts only on what the GPU held that recently; a busy GPU
// is looked at again every k_recheck, not at every step, as each look runs
// nvidia-smi on its host.
#include "runner/sched/gpu_gates.h"

#include <fmt/format.h>

#include "runner/core/printable.h"
#include "runner/ui/exit_text.h"
#include "runner/ui/summary.h"

namespace runner {

namespace {

// How old a look may be for a job to start on it.
constexpr auto k_fresh = std::chrono::seconds(2);
// How soon a busy GPU is looked at again.
constexpr auto k_recheck = std::chrono::seconds(5);

}  // namespace

GpuGates::GpuGates(const Fleet& fleet, const SlotBook& slots, const HostTable& hosts,
                   const SchedulerOptions& options, RunObserver& observer)
    : m_fleet(fleet),
      m_slots(slots),
      m_host_table(hosts),
      m_options(options),
      m_observer(observer),
      m_enforced(options.mode == Mode::queue),
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

std::optional<Clock::time_point> GpuGates::look_due(int host, bool wanted) const {
  if (!m_enforced || !wanted || m_host_table[host].state != HostState::ready) return std::nullopt;
  return due(host);
}

std::vector<GpuLook> GpuGates::begin_due_looks(bool wanted, Clock::time_point now) {
  std::vector<GpuLook> looks;
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    std::optional<Clock::time_point> due = look_due(h, wanted);
    if (!due || *due > now) continue;
    m_hosts[h].look = HostLooks::Look{0, now + m_options.gpu_check_limit};
    looks.push_back(GpuLook{h});
  }
  return looks;
}

void GpuGates::look_runs_as(int host, TaskId command) {
  if (m_hosts[host].look) m_hosts[host].look->command = command;
}

bool GpuGates::looked(int host, const GpuLookAnswer& answer, Clock::time_point now) {
  if (!m_hosts[host].look) return false;  // given up on already
  m_hosts[host].look.reset();
  if (answer.usage) {
    record(host, *answer.usage, now);
  } else if (!answer.exit.lost()) {  // the host's loss is said on its own
    std::string said = printable(answer.said);
    broke(host, fmt::format("nvidia-smi: {}{}", describe_exit(answer.exit),
                            said.empty() ? "" : ", " + said));
  }
  return true;
}

std::vector<GpuLookGivenUp> GpuGates::give_up_overdue(Clock::time_point now) {
  std::vector<GpuLookGivenUp> given_up;
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    std::optional<HostLooks::Look>& look = m_hosts[h].look;
    if (!look || now < look->give_up_at) continue;
    given_up.push_back(GpuLookGivenUp{h, look->command});
    look.reset();  // its end, when it comes, is not looked at
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(m_options.gpu_check_limit);
    broke(h, "nvidia-smi did not answer within " + format_duration(limit));
  }
  return given_up;
}

std::optional<Clock::time_point> GpuGates::next_due(bool wanted) const {
  std::optional<Clock::time_point> next;
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    const std::optional<HostLooks::Look>& look = m_hosts[h].look;
    std::optional<Clock::time_point> at = look ? look->give_up_at : look_due(h, wanted);
    if (at && (!next || *at < *next)) next = at;
  }
  return next;
}

void GpuGates::broke(int host, const std::string& why) {
  m_hosts[host].broken = true;
  m_observer.warning(
      fmt::format("{}: cannot tell whether its GPUs are free for `gpu_free` ({}); "
                  "its jobs start without waiting",
                  m_fleet.hosts[host].name, why));
}

void GpuGates::record(int host, const std::map<std::string, GpuUsage>& usage,
                      Clock::time_point now) {
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
      m_observer.notice(fmt::format("{}: its GPU is not free ({}; gpu_free: {}); jobs wait for it",
                                    where.label, *busy, where.gpu_free->text));
    else if (!busy && was == Gate::State::busy)
      m_observer.notice(fmt::format("{}: its GPU is free again", where.label));
    gate.why = busy.value_or("");
  }
}

}  // namespace runner
