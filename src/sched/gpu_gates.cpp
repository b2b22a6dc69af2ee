// The scheduler's GPU gates (`gpu_free:` in hosts.yaml): a slot whose GPU
// must be free takes a job only on a fresh look at what its GPU holds: the
// host is asked (k_gpu_usage) when such a slot is free and work waits, and
// again a few seconds later while the GPU is busy. A GPU that a job of this
// run holds through another slot is not free either, whatever nvidia-smi
// says yet. A host whose nvidia-smi fails, or does not answer within
// gpu_check_limit, is said once, and its slots then take jobs unchecked.
// Queue mode only: broadcast steps run on every slot.
#include <fmt/format.h>
#include <signal.h>

#include "runner/core/printable.h"
#include "runner/probe/gpu_listing.h"
#include "runner/sched/scheduler.h"
#include "runner/ui/exit_text.h"
#include "runner/ui/summary.h"

namespace runner {

namespace {

// How old a look may be for a job to start on it.
constexpr auto k_fresh = std::chrono::seconds(2);
// How soon a busy GPU is looked at again.
constexpr auto k_recheck = std::chrono::seconds(5);

}  // namespace

bool Scheduler::gpu_gate_open(int slot) const {
  const Slot& where = m_fleet.slots[slot];
  if (!where.gpu_free || m_options.mode != Mode::queue) return true;
  if (m_slots.gpu_held_through_another_slot(slot)) return false;
  if (m_hosts[where.host].gpu_check_broken) return true;
  const GpuGate& gate = m_gpu_gates[slot];
  return gate.state == GpuGate::State::free && m_now - gate.checked_at <= k_fresh;
}

bool Scheduler::gpu_gates_waiting() const {
  for (int s = 0; s < m_slots.size(); ++s)
    if (m_slots.free(s) && !gpu_gate_open(s) &&
        m_hosts[m_fleet.slots[s].host].state == HostState::ready)
      return true;
  return false;
}

std::optional<Clock::time_point> Scheduler::gpu_check_due(int host) const {
  if (m_options.mode != Mode::queue || m_stopping) return std::nullopt;
  if (m_queue_empty && !m_queue_dirty && m_reruns.empty()) return std::nullopt;  // no work waits
  const HostRecord& record = m_hosts[host];
  if (record.state != HostState::ready || record.gpu_check || record.gpu_check_broken)
    return std::nullopt;
  std::optional<Clock::time_point> due;
  for (int slot : m_fleet.hosts[host].slots) {
    const GpuGate& gate = m_gpu_gates[slot];
    if (!m_fleet.slots[slot].gpu_free || !m_slots.free(slot) ||
        m_slots.gpu_held_through_another_slot(slot))
      continue;
    Clock::time_point at = gate.state == GpuGate::State::busy   ? gate.checked_at + k_recheck
                           : gate.state == GpuGate::State::free ? gate.checked_at + k_fresh
                                                                : Clock::time_point::min();
    if (!due || at < *due) due = at;
  }
  return due;
}

std::optional<Clock::time_point> Scheduler::next_gpu_check() const {
  std::optional<Clock::time_point> due;
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    const std::optional<HostRecord::GpuCheck>& check = m_hosts[h].gpu_check;
    std::optional<Clock::time_point> at = check ? check->give_up_at : gpu_check_due(h);
    if (at && (!due || *at < *due)) due = at;
  }
  return due;
}

void Scheduler::check_gpus() {
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    std::optional<Clock::time_point> due = gpu_check_due(h);
    if (!due || *due > m_now) continue;
    HostRecord& host = m_hosts[h];
    host.gpu_check = HostRecord::GpuCheck{0, m_now + m_options.gpu_check_limit};
    TaskId command = m_executors[h]->run_command(
        k_gpu_usage, [this, h](const JobExit& exit, const std::string& output) {
          gpus_checked(h, exit, output);
        });
    if (host.gpu_check) host.gpu_check->command = command;  // (unless it ended at once)
  }
}

void Scheduler::time_out_gpu_checks(Clock::time_point now) {
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    HostRecord& host = m_hosts[h];
    if (!host.gpu_check || now < host.gpu_check->give_up_at) continue;
    TaskId command = host.gpu_check->command;
    host.gpu_check.reset();  // its end, when it comes, is not looked at
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(m_options.gpu_check_limit);
    gpu_check_broke(h, "nvidia-smi did not answer within " + format_duration(limit));
    m_executors[h]->signal_task(command, SIGKILL);
  }
}

void Scheduler::gpu_check_broke(int host, const std::string& why) {
  m_hosts[host].gpu_check_broken = true;
  m_queue_dirty = true;
  m_observer.warning(
      fmt::format("{}: cannot tell whether its GPUs are free for `gpu_free` ({}); "
                  "its jobs start without waiting",
                  m_fleet.hosts[host].name, why));
}

void Scheduler::gpus_checked(int host, const JobExit& exit, const std::string& output) {
  HostRecord& record = m_hosts[host];
  if (!record.gpu_check) return;  // given up on already
  record.gpu_check.reset();
  m_queue_dirty = true;
  std::optional<std::map<std::string, GpuUsage>> usage;
  if (exit.succeeded()) usage = parse_gpu_usage(output);
  if (!usage) {
    if (exit.lost()) return;  // the host's loss is said on its own
    std::string said = printable(output.substr(0, output.find('\n')));
    gpu_check_broke(host, fmt::format("nvidia-smi: {}{}", describe_exit(exit),
                                      said.empty() ? "" : ", " + said));
    return;
  }
  for (int slot : m_fleet.hosts[host].slots) {
    const Slot& where = m_fleet.slots[slot];
    if (!where.gpu_free || !m_slots.free(slot)) continue;
    GpuGate& gate = m_gpu_gates[slot];
    std::optional<std::string> gpu = find_param(where.params, "gpu");
    std::optional<std::string> busy;
    if (!gpu) {
      busy = "it has no `gpu` parameter to look at";
    } else if (auto it = usage->find(*gpu); it == usage->end()) {
      busy = fmt::format("nvidia-smi does not list GPU {}", *gpu);
    } else {
      busy = gpu_busy_reason(*where.gpu_free, it->second);
    }
    GpuGate::State was = gate.state;
    gate.state = busy ? GpuGate::State::busy : GpuGate::State::free;
    gate.checked_at = m_options.clock();
    if (busy && (was != GpuGate::State::busy || gate.why != *busy))
      m_observer.notice(fmt::format("{}: its GPU is not free ({}; gpu_free: {}); jobs wait for it",
                                    where.label, *busy, where.gpu_free->text));
    else if (!busy && was == GpuGate::State::busy)
      m_observer.notice(fmt::format("{}: its GPU is free again", where.label));
    gate.why = busy.value_or("");
  }
}

}  // namespace runner
