// The status line: its text, the ETA estimate, and the counts it is drawn
// from, redrawn at a bounded rate.
#include "runner/ui/status_line.h"

#include <fmt/format.h>

#include <algorithm>

namespace runner {

namespace {

using std::chrono::milliseconds;

constexpr auto k_redraw_interval = milliseconds(250);
constexpr auto k_min_count_interval = milliseconds(1000);
// Counting the queue may take at most 1/k of the time between counts.
constexpr int k_count_cost_factor = 20;
constexpr std::size_t k_bar_cells = 10;
constexpr std::string_view k_separator = " · ";

std::size_t columns(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// One piece of the line. Pieces with a lower `drop` go first when the line
// does not fit; 0 is never dropped.
struct Part {
  std::string text;
  int drop = 0;
  std::string_view sgr;  // colour when colouring
};

}  // namespace

std::string format_short_duration(milliseconds duration) {
  long long s = std::max<long long>(0, duration.count()) / 1000;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h {:02}m", s / 3600, s % 3600 / 60);
  return fmt::format("{}d {:02}h", s / 86400, s % 86400 / 3600);
}

std::string format_status_line(const RunProgress& p, std::size_t width, bool color) {
  std::size_t done = p.succeeded + p.failed;
  std::size_t total = done + p.running + p.queued.value_or(0) * p.runs_per_job;
  std::vector<Part> parts;
  if (total > 0) {
    std::size_t filled = std::min(k_bar_cells, done * k_bar_cells / total);
    parts.push_back(
        {"[" + std::string(filled, '#') + std::string(k_bar_cells - filled, '.') + "]", 1, ""});
  }
  parts.push_back({fmt::format("{}/{} done", done, total), 0, ""});
  if (p.failed > 0) parts.push_back({fmt::format("{} failed", p.failed), 8, "1;31"});
  parts.push_back({fmt::format("{} running", p.running), 7, ""});
  parts.push_back({p.queued ? fmt::format("{} queued", *p.queued) : "? queued", 6, ""});
  parts.push_back({fmt::format("{}/{} slots busy", p.busy_slots, p.total_slots), 4, ""});
  if (p.hosts_down > 0) {
    parts.push_back(
        {fmt::format("{} host{} down", p.hosts_down, p.hosts_down == 1 ? "" : "s"), 3, "33"});
  }
  parts.push_back({format_short_duration(p.elapsed), 2, ""});
  if (p.eta) parts.push_back({"ETA " + format_short_duration(*p.eta), 5, ""});

  std::size_t limit = width > 1 ? width - 1 : 0;
  auto line_columns = [&] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      // The bar is followed by a space, the rest by separators.
      if (i > 0) n += parts[i - 1].drop == 1 ? 1 : columns(k_separator);
      n += columns(parts[i].text);
    }
    return n;
  };
  while (line_columns() > limit) {
    auto victim = std::min_element(parts.begin(), parts.end(), [](const Part& a, const Part& b) {
      return (a.drop == 0 ? 1000 : a.drop) < (b.drop == 0 ? 1000 : b.drop);
    });
    if (victim->drop == 0) break;
    parts.erase(victim);
  }

  std::string line;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) line.append(parts[i - 1].drop == 1 ? std::string_view(" ") : k_separator);
    if (color && !parts[i].sgr.empty()) {
      line.append("\x1b[").append(parts[i].sgr).append("m").append(parts[i].text).append("\x1b[0m");
    } else {
      line.append(parts[i].text);
    }
  }
  if (line_columns() > limit) {
    // Too narrow even for the count: cut the plain text.
    line = parts.front().text.substr(0, limit);
  }
  return line;
}

std::optional<milliseconds> estimate_remaining(std::optional<milliseconds> mean_slot_time,
                                               std::size_t queued_runs,
                                               const std::vector<RunningShare>& running,
                                               std::size_t usable_slots) {
  if (!mean_slot_time || usable_slots == 0) return std::nullopt;
  long long mean = mean_slot_time->count();
  long long work = mean * static_cast<long long>(queued_runs);
  long long longest = 0;
  for (const RunningShare& job : running) {
    long long slots = static_cast<long long>(std::max<std::size_t>(1, job.slots));
    // The mean is slot-time: this job's own duration is mean / slots.
    long long left = std::max(0LL, mean / slots - job.elapsed.count());
    work += left * slots;
    longest = std::max(longest, left);
  }
  return milliseconds(std::max(longest, work / static_cast<long long>(usable_slots)));
}

StatusLine::StatusLine(Console& console, std::size_t total_slots, std::size_t runs_per_job,
                       CountQueued count_queued, Clock::time_point start)
    : m_console(console),
      m_total_slots(total_slots),
      m_runs_per_job(std::max<std::size_t>(1, runs_per_job)),
      m_count_queued(std::move(count_queued)),
      m_start(start) {}

void StatusLine::job_started(JobId job, std::size_t slots, Clock::time_point now) {
  // The job left the queue (in broadcast mode, once per step: the first run
  // of a step starts when no run is left); counting again confirms it.
  bool left_queue = m_runs_per_job == 1 || m_running.empty();
  if (m_reruns.erase(job) > 0) left_queue = false;  // it was never in the file again
  if (left_queue && m_queued && *m_queued > 0) --*m_queued;
  m_running[job] = Running{now, slots};
  m_busy_slots += slots;
  m_queue_dirty = true;
}

void StatusLine::job_finished(JobId job, bool succeeded, Clock::duration took, bool runs_again) {
  auto it = m_running.find(job);
  std::size_t slots = 1;
  if (it != m_running.end()) {
    slots = it->second.slots;
    m_busy_slots -= std::min(m_busy_slots, slots);
    m_running.erase(it);
  }
  if (runs_again) {
    m_reruns.insert(job);
    return;
  }
  ++(succeeded ? m_succeeded : m_failed);
  ++m_finished;
  m_slot_time += std::chrono::duration_cast<milliseconds>(took) * static_cast<long long>(slots);
}

void StatusLine::host_down(const std::string& name, std::size_t slots) {
  m_down_hosts[name] = slots;
}

void StatusLine::host_up(const std::string& name) { m_down_hosts.erase(name); }

RunProgress StatusLine::progress(Clock::time_point now) const {
  RunProgress p;
  p.succeeded = m_succeeded;
  p.failed = m_failed;
  p.running = m_running.size();
  p.queued = m_queued;
  if (p.queued) *p.queued += m_reruns.size();
  p.runs_per_job = m_runs_per_job;
  p.busy_slots = m_busy_slots;
  p.total_slots = m_total_slots;
  p.hosts_down = m_down_hosts.size();
  p.elapsed = std::chrono::duration_cast<milliseconds>(now - m_start);
  std::optional<milliseconds> mean;
  if (m_finished > 0) mean = m_slot_time / static_cast<long long>(m_finished);
  std::vector<RunningShare> running;
  running.reserve(m_running.size());
  for (const auto& [id, job] : m_running) {
    running.push_back({std::chrono::duration_cast<milliseconds>(now - job.start), job.slots});
  }
  std::size_t slots_down = 0;
  for (const auto& [name, slots] : m_down_hosts) slots_down += slots;
  std::size_t usable = m_total_slots - std::min(m_total_slots, slots_down);
  if (p.queued.value_or(0) > 0 || !running.empty())
    p.eta = estimate_remaining(mean, p.queued.value_or(0) * m_runs_per_job, running, usable);
  return p;
}

void StatusLine::finish() {
  m_finished_drawing = true;
  m_console.clear_status();
}

void StatusLine::step(Clock::time_point now) {
  if (m_finished_drawing) return;
  if (m_queue_dirty && m_count_queued && now >= m_next_count) {
    auto before = Clock::now();
    if (std::optional<std::size_t> queued = m_count_queued()) m_queued = queued;
    auto took = Clock::now() - before;
    m_queue_dirty = false;
    m_next_count =
        now + std::max<Clock::duration>(k_min_count_interval, took * k_count_cost_factor);
  }
  if (now < m_next_draw) return;
  m_next_draw = now + k_redraw_interval;
  m_console.show_status(
      format_status_line(progress(now), m_console.status_width(), m_console.colors_status()));
}

std::optional<Clock::time_point> StatusLine::deadline() const {
  if (m_finished_drawing) return std::nullopt;
  return m_next_draw;
}

}  // namespace runner
