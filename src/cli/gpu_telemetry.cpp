#include "gpu_telemetry.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "runner/core/debug_log.h"
#include "runner/core/printable.h"
#include "runner/exec/gpu_monitor_command.h"
#include "runner/state/journal_records.h"
#include "runner/ui/exit_text.h"

namespace runner {

GpuTelemetry::GpuTelemetry(const Fleet& fleet, std::chrono::milliseconds period,
                           std::function<void(const std::string&)> warn, ClockSource clock)
    : m_fleet(fleet),
      m_period(period),
      m_warn(std::move(warn)),
      m_clock(std::move(clock)),
      m_hosts(fleet.hosts.size()) {}

Clock::duration GpuTelemetry::reach() const {
  return std::max<Clock::duration>(5 * m_period, std::chrono::seconds(1));
}

Clock::duration GpuTelemetry::series_stretch() const {
  return std::clamp<Clock::duration>(50 * m_period, std::chrono::seconds(1),
                                     std::chrono::seconds(10));
}

Clock::duration GpuTelemetry::silence_limit() const {
  return std::max<Clock::duration>(k_silence_periods * m_period, std::chrono::seconds(2));
}

bool GpuTelemetry::has_gpu_slots(int host) const {
  for (int slot : m_fleet.hosts[host].slots) {
    const Slot& where = m_fleet.slots[slot];
    if (where.gpu_monitor &&
        (find_param(where.params, "gpu") || find_param(where.params, "gpu_uuid")))
      return true;
  }
  return false;
}

bool GpuTelemetry::gpus_expected(int host) const {
  bool remote = !m_fleet.hosts[host].address.local;
  for (int slot : m_fleet.hosts[host].slots) {
    const Slot& where = m_fleet.slots[slot];
    if (where.gpu_monitor_asked || find_param(where.params, "gpu_uuid") ||
        (remote && find_param(where.params, "gpu")))
      return true;
  }
  return false;
}

void GpuTelemetry::job_launched(const Job& job) {
  std::set<int> hosts;
  for (const Task& task : job.tasks) hosts.insert(task.host);
  for (int host : hosts) {
    HostMonitor& monitor = m_hosts[host];
    if (++monitor.jobs == 1 && monitor.state == MonitorState::idle && has_gpu_slots(host) &&
        static_cast<std::size_t>(host) < m_host_ops.size())
      start_monitor(host);
  }
}

void GpuTelemetry::task_started(const Job&, const Task& task) {
  m_task_starts[task.id] = m_clock();
}

void GpuTelemetry::start_monitor(int host) {
  HostMonitor& monitor = m_hosts[host];
  monitor.state = MonitorState::running;
  monitor.heard_at = m_clock();
  monitor.restart_at.reset();
  monitor.partial.clear();
  // What an earlier monitor of the host says late is not this one's.
  int generation = ++monitor.generation;
  monitor.command = m_host_ops[host]->run_command_streaming(
      gpu_monitor_command(m_period),
      [this, host, generation](std::string_view bytes) { monitor_output(host, generation, bytes); },
      [this, host, generation](const JobExit& exit, const std::string&) {
        monitor_ended(host, generation, exit);
      });
}

void GpuTelemetry::stop_monitor(int host) {
  HostMonitor& monitor = m_hosts[host];
  monitor.restart_at.reset();
  if (monitor.state != MonitorState::running) return;
  monitor.state = MonitorState::idle;
  m_host_ops[host]->stop_command(monitor.command);
  monitor.command = 0;
}

void GpuTelemetry::monitor_output(int host, int generation, std::string_view bytes) {
  HostMonitor& monitor = m_hosts[host];
  if (monitor.state != MonitorState::running || generation != monitor.generation) return;
  Clock::time_point now = m_clock();
  monitor.partial.append(bytes);
  std::size_t begin = 0;
  for (std::size_t end; (end = monitor.partial.find('\n', begin)) != std::string::npos;
       begin = end + 1) {
    GpuLine line = parse_gpu_line(std::string_view(monitor.partial).substr(begin, end - begin));
    if (!line.refused.empty()) refuse(host, line.refused);
    if (!line.reading) continue;
    GpuReading& reading = *line.reading;
    monitor.heard_at = now;
    Clock::duration behind = now - reading.sample.at;
    if (monitor.host_behind && behind < *monitor.host_behind - k_clock_jump) {
      auto ahead = std::chrono::duration<double>(*monitor.host_behind - behind).count();
      refuse(host, fmt::format("a reading stamped {:.0f} s ahead of the host's clock", ahead));
      continue;
    }
    if (!monitor.host_behind || behind < *monitor.host_behind) monitor.host_behind = behind;
    if (monitor.index_of_uuid.size() < k_max_gpus_per_host ||
        monitor.index_of_uuid.contains(reading.uuid))
      monitor.index_of_uuid[reading.uuid] = reading.index;
    add_sample(host, reading.index, reading.sample);
  }
  monitor.partial.erase(0, begin);
  if (monitor.partial.size() > 4096) monitor.partial.clear();  // no line is that long
  if (!m_awaited.empty()) settle_figures();
}

void GpuTelemetry::add_sample(int host, const std::string& gpu, GpuSample sample) {
  std::vector<GpuSample>& samples = m_hosts[host].by_index[gpu];
  if (!samples.empty() && sample.at < samples.back().at)
    return refuse(host, fmt::format("GPU {}'s readings went back in time", gpu));
  // Lines of one time are one reading of the GPU: the last counts.
  if (!samples.empty() && sample.at == samples.back().at) samples.pop_back();
  if (!samples.empty()) {
    if (std::string why = counter_refusal(samples.back(), sample); !why.empty()) {
      refuse(host, fmt::format("GPU {}: {}", gpu, why));
      sample.energy_mj.reset();
    }
  }
  samples.push_back(sample);
  record_power(host, gpu, false);
}

void GpuTelemetry::record_power(int host, const std::string& gpu, bool all) {
  HostMonitor& monitor = m_hosts[host];
  const std::vector<GpuSample>& samples = monitor.by_index[gpu];
  if (!m_series || samples.empty() || !monitor.host_behind) return;
  Clock::time_point last = samples.back().at;
  auto [from, first] = monitor.series_from.try_emplace(gpu, last);
  if (first) return;
  Clock::time_point to = from->second + series_stretch();
  if (last < to) {
    if (!all || last <= from->second) return;
    to = last;
  }
  Clock::time_point begin = from->second;
  // After a long gap, the next stretch begins at the last reading.
  from->second = last - to >= series_stretch() ? last : to;
  std::optional<GpuFigures> figures = figures_between(samples, begin, to, reach());
  if (!figures) return;
  // From the host's clock to the runner's, then to the wall clock's.
  auto wall_of = [&, wall_now = std::chrono::system_clock::now(),
                  now = m_clock()](Clock::time_point on_host) {
    return wall_now - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                          now - (on_host + *monitor.host_behind));
  };
  Status written = m_series->append(
      {m_fleet.hosts[host].name, gpu, wall_of(begin), wall_of(to), figures->power_mean_w});
  if (!written.ok()) {
    m_warn(written.message() + "; GPU power over time is no longer recorded");
    m_series = nullptr;
  }
}

void GpuTelemetry::record_all_power(int host) {
  for (const auto& [gpu, samples] : m_hosts[host].by_index) record_power(host, gpu, true);
}

void GpuTelemetry::refuse(int host, const std::string& why) {
  HostMonitor& monitor = m_hosts[host];
  if (monitor.refusal_said) return;
  monitor.refusal_said = true;
  m_warn(fmt::format("{}: its GPU monitor said what no GPU does ({}); such readings are left out",
                     m_fleet.hosts[host].name, why));
}

std::optional<Clock::time_point> GpuTelemetry::host_time_of(int host, Clock::time_point at) const {
  const std::optional<Clock::duration>& behind = m_hosts[host].host_behind;
  if (!behind) return std::nullopt;
  return at - *behind;
}

void GpuTelemetry::monitor_ended(int host, int generation, const JobExit& exit) {
  HostMonitor& monitor = m_hosts[host];
  if (monitor.state != MonitorState::running || generation != monitor.generation) return;
  monitor.state = MonitorState::idle;
  monitor.command = 0;
  settle_figures();         // nothing more comes from it
  if (exit.lost()) return;  // the host's loss is said on its own; its jobs end with it
  const std::string& name = m_fleet.hosts[host].name;
  if (exit.code() == k_no_nvidia_smi) {
    monitor.state = MonitorState::absent;
    std::string said = fmt::format("{}: no nvidia-smi; its GPUs are not monitored", name);
    if (gpus_expected(host))
      m_warn(said);
    else
      debug_log::step("{}", said);
    return;
  }
  restart_later(host, fmt::format("its GPU monitor ended ({})", describe_exit(exit)));
}

void GpuTelemetry::restart_later(int host, const std::string& why) {
  HostMonitor& monitor = m_hosts[host];
  const std::string& name = m_fleet.hosts[host].name;
  if (monitor.restarts >= k_restarts) {
    monitor.state = MonitorState::dropped;
    m_warn(fmt::format("{}: {}; its GPUs are not monitored for the rest of the run", name, why));
    return;
  }
  ++monitor.restarts;
  m_warn(fmt::format("{}: {}; starting it again", name, why));
  if (monitor.jobs > 0) monitor.restart_at = m_clock() + std::chrono::seconds(1);
}

void GpuTelemetry::step(Clock::time_point now) {
  for (int host = 0; host < static_cast<int>(m_hosts.size()); ++host) {
    HostMonitor& monitor = m_hosts[host];
    if (monitor.state == MonitorState::idle && monitor.restart_at && now >= *monitor.restart_at) {
      start_monitor(host);
    } else if (monitor.state == MonitorState::running && now - monitor.heard_at > silence_limit()) {
      auto silent = std::chrono::duration<double>(now - monitor.heard_at).count();
      stop_monitor(host);
      restart_later(host, fmt::format("its GPU monitor said nothing for {:.1f}s", silent));
    }
  }
  if (!m_awaited.empty()) settle_figures();
}

std::optional<Clock::time_point> GpuTelemetry::deadline() const {
  std::optional<Clock::time_point> due;
  for (const HostMonitor& monitor : m_hosts) {
    std::optional<Clock::time_point> at;
    if (monitor.state == MonitorState::idle && monitor.restart_at) at = monitor.restart_at;
    if (monitor.state == MonitorState::running) at = monitor.heard_at + silence_limit();
    if (at && (!due || *at < *due)) due = at;
  }
  for (const AwaitedFigures& awaited : m_awaited)
    if (!due || awaited.due < *due) due = awaited.due;
  return due;
}

std::optional<std::string> GpuTelemetry::gpu_index_of(int slot) const {
  const Slot& where = m_fleet.slots[slot];
  if (!where.gpu_monitor) return std::nullopt;
  if (std::optional<std::string> index = find_param(where.params, "gpu")) return index;
  std::optional<std::string> uuid = find_param(where.params, "gpu_uuid");
  if (!uuid) return std::nullopt;
  const HostMonitor& monitor = m_hosts[where.host];
  auto it = monitor.index_of_uuid.find(*uuid);
  if (it == monitor.index_of_uuid.end()) return std::nullopt;
  return it->second;
}

void GpuTelemetry::job_finished(const Job& job) {
  Clock::time_point end = m_clock();
  AwaitedFigures awaited{{job.id, job.attempt, job.slots(), {}}, {}, end + k_job_gpu_wait};
  std::set<int> hosts;
  for (const Task& task : job.tasks) {
    hosts.insert(task.host);
    auto start = m_task_starts.find(task.id);
    if (start == m_task_starts.end()) continue;
    std::set<std::string> gpus;  // slots that share a GPU count it once
    for (int slot : task.slots)
      if (std::optional<std::string> index = gpu_index_of(slot)) gpus.insert(*index);
    const HostMonitor& monitor = m_hosts[task.host];
    std::optional<Clock::time_point> from = host_time_of(task.host, start->second);
    std::optional<Clock::time_point> to = host_time_of(task.host, end);
    m_task_starts.erase(start);
    if (!from || !to) continue;
    for (const std::string& gpu : gpus)
      if (monitor.by_index.contains(gpu)) awaited.windows.push_back({task.host, gpu, *from, *to});
  }
  if (!awaited.windows.empty()) m_awaited.push_back(std::move(awaited));
  for (int host : hosts) {
    HostMonitor& monitor = m_hosts[host];
    record_all_power(host);
    if (monitor.jobs > 0) --monitor.jobs;
  }
  settle_figures();
  for (int host : hosts) release_host(host);
}

bool GpuTelemetry::window_read(const GpuWindow& window) const {
  const HostMonitor& monitor = m_hosts[window.host];
  if (monitor.state != MonitorState::running) return true;  // nothing more comes
  auto samples = monitor.by_index.find(window.gpu);
  return samples != monitor.by_index.end() && !samples->second.empty() &&
         samples->second.back().at >= window.to;
}

void GpuTelemetry::settle_figures(bool all) {
  Clock::time_point now = m_clock();
  std::set<int> hosts;
  std::erase_if(m_awaited, [&](const AwaitedFigures& awaited) {
    if (!all && now < awaited.due &&
        !std::ranges::all_of(awaited.windows, [&](const GpuWindow& w) { return window_read(w); }))
      return false;
    std::vector<GpuFigures> each;
    for (const GpuWindow& window : awaited.windows) {
      hosts.insert(window.host);
      const std::vector<GpuSample>& samples = m_hosts[window.host].by_index[window.gpu];
      if (std::optional<GpuFigures> figures =
              figures_between(samples, window.from, window.to, reach()))
        each.push_back(*figures);
    }
    if (!each.empty() && m_figures_sink) {
      JobGpuFigures job = awaited.job;
      job.figures = combined(each);
      m_figures_sink(job);
    }
    return true;
  });
  for (int host : hosts) release_host(host);
}

void GpuTelemetry::release_host(int host) {
  HostMonitor& monitor = m_hosts[host];
  bool awaited_there = std::ranges::any_of(m_awaited, [&](const AwaitedFigures& awaited) {
    return std::ranges::any_of(awaited.windows,
                               [&](const GpuWindow& window) { return window.host == host; });
  });
  if (monitor.jobs > 0 || awaited_there) return forget_old_readings(host);
  record_all_power(host);
  stop_monitor(host);
  monitor.by_index.clear();
  monitor.series_from.clear();
}

bool GpuTelemetry::awaiting_figures() const { return !m_awaited.empty(); }

void GpuTelemetry::finish() { settle_figures(true); }

void GpuTelemetry::forget_old_readings(int host) {
  std::optional<Clock::time_point> oldest;
  for (const auto& [task, start] : m_task_starts)
    if (!oldest || start < *oldest) oldest = start;
  // A task launched but not started yet needs what comes from now on.
  std::optional<Clock::time_point> oldest_on_host = host_time_of(host, oldest.value_or(m_clock()));
  if (!oldest_on_host) return;
  for (const AwaitedFigures& awaited : m_awaited)
    for (const GpuWindow& window : awaited.windows)
      if (window.host == host) oldest_on_host = std::min(*oldest_on_host, window.from);
  Clock::time_point keep_from = *oldest_on_host - reach();
  for (auto& [gpu, samples] : m_hosts[host].by_index) {
    auto first_kept = std::find_if(samples.begin(), samples.end(),
                                   [&](const GpuSample& s) { return s.at >= keep_from; });
    if (first_kept != samples.begin()) --first_kept;  // the one before bridges to it
    samples.erase(samples.begin(), first_kept);
  }
}

}  // namespace runner
