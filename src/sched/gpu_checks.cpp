// The scheduler's looks at GPUs for `gpu_free:` slots (hosts.yaml): the
// host is asked (k_gpu_usage) when such a slot is free and work waits, and
// again a few seconds later while the GPU is busy; what the gates are and
// when they are due is GpuGates'. A host whose nvidia-smi fails, or does
// not answer within gpu_check_limit, is said once, and its slots then take
// jobs unchecked.
#include <fmt/format.h>
#include <signal.h>

#include "runner/core/printable.h"
#include "runner/probe/gpu_listing.h"
#include "runner/sched/scheduler.h"
#include "runner/ui/exit_text.h"
#include "runner/ui/summary.h"

namespace runner {

std::optional<Clock::time_point> Scheduler::gpu_check_due(int host) const {
  if (m_options.mode != Mode::queue || m_stopping) return std::nullopt;
  if (!work_waits()) return std::nullopt;
  if (m_hosts[host].state != HostState::ready) return std::nullopt;
  return m_gpu_gates.due(host);
}

std::optional<Clock::time_point> Scheduler::next_gpu_check() const {
  std::optional<Clock::time_point> due;
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    std::optional<Clock::time_point> give_up = m_gpu_gates.give_up_at(h);
    std::optional<Clock::time_point> at = give_up ? give_up : gpu_check_due(h);
    if (at && (!due || *at < *due)) due = at;
  }
  return due;
}

void Scheduler::check_gpus() {
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    std::optional<Clock::time_point> due = gpu_check_due(h);
    if (!due || *due > m_now) continue;
    m_gpu_gates.look_begins(h, m_now + m_options.gpu_check_limit);
    TaskId command = m_executors[h]->run_command(
        k_gpu_usage, [this, h](const JobExit& exit, const std::string& output) {
          gpus_checked(h, exit, output);
        });
    m_gpu_gates.look_runs_as(h, command);
  }
}

void Scheduler::time_out_gpu_checks(Clock::time_point now) {
  for (int h = 0; h < static_cast<int>(m_fleet.hosts.size()); ++h) {
    std::optional<TaskId> command = m_gpu_gates.give_up_if_overdue(h, now);
    if (!command) continue;
    auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(m_options.gpu_check_limit);
    gpu_check_broke(h, "nvidia-smi did not answer within " + format_duration(limit));
    m_executors[h]->signal_task(*command, SIGKILL);
  }
}

void Scheduler::gpu_check_broke(int host, const std::string& why) {
  m_gpu_gates.broke(host);
  m_queue_dirty = true;
  m_observer.warning(
      fmt::format("{}: cannot tell whether its GPUs are free for `gpu_free` ({}); "
                  "its jobs start without waiting",
                  m_fleet.hosts[host].name, why));
}

void Scheduler::gpus_checked(int host, const JobExit& exit, const std::string& output) {
  if (!m_gpu_gates.look_ends(host)) return;  // given up on already
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
  for (const std::string& notice : m_gpu_gates.record(host, *usage, m_options.clock()))
    m_observer.notice(notice);
}

}  // namespace runner
