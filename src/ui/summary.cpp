// Formatting of the end-of-run summary.
#include "runner/ui/summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "runner/ui/exit_text.h"

namespace runner {

namespace {

enum class Outcome { succeeded, failed, lost, cancelled, service_stopped };

Outcome outcome_of(const FinishedJob& job) {
  if (job.exit.lost()) return Outcome::lost;
  if (job.exit.succeeded()) return Outcome::succeeded;
  if (job.exit.cancelled) return job.service ? Outcome::service_stopped : Outcome::cancelled;
  return Outcome::failed;
}

std::string count_of(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::size_t utf8_length(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// Byte offset of the `chars`-th character of `text`.
std::size_t utf8_offset(std::string_view text, std::size_t chars) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (seen == chars) return i;
    ++seen;
  }
  return text.size();
}

// A heading, then each job whose `problem` is not empty with it; nothing
// when there is none.
std::string problems_section(const std::vector<FinishedJob>& jobs,
                             std::string FinishedJob::*problem, std::string_view heading) {
  std::string text;
  for (const FinishedJob& job : jobs) {
    if ((job.*problem).empty()) continue;
    if (text.empty()) text = fmt::format("runner: {}\n", heading);
    text += fmt::format("  #{}", job.id);
    if (!job.label.empty()) text += " [" + job.label + "]";
    text += " " + job.*problem + "\n";
  }
  return text;
}

}  // namespace

std::string format_duration(std::chrono::milliseconds duration) {
  long long ms = std::max<long long>(0, duration.count());
  if (ms < 1000) return fmt::format("{}ms", ms);
  if (ms < 60'000) return fmt::format("{}.{}s", ms / 1000, ms % 1000 / 100);
  long long s = ms / 1000;
  if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h {:02}m {:02}s", s / 3600, s % 3600 / 60, s % 60);
  return fmt::format("{}d {:02}h {:02}m", s / 86400, s % 86400 / 3600, s % 3600 / 60);
}

std::string shorten_command(std::string_view command, std::size_t max_chars) {
  std::string flat;
  flat.reserve(std::min(command.size(), max_chars * 4 + 4));
  bool space = false;
  for (char c : command) {
    bool blank = c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
    if (blank) {
      space = !flat.empty();
      continue;
    }
    if (space) flat.push_back(' ');
    space = false;
    flat.push_back(c);
    // Enough to decide; the rest is cut anyway.
    if (flat.size() > max_chars * 4 + 4) break;
  }
  if (utf8_length(flat) <= max_chars) return flat;
  if (max_chars == 0) return std::string();
  flat.resize(utf8_offset(flat, max_chars - 1));
  while (!flat.empty() && flat.back() == ' ') flat.pop_back();
  return flat + "…";
}

std::string format_summary(const std::vector<FinishedJob>& jobs,
                           std::chrono::milliseconds wall_time, std::size_t max_listed) {
  std::size_t counts[5] = {0, 0, 0, 0, 0};
  std::vector<const FinishedJob*> unsuccessful;
  for (const FinishedJob& job : jobs) {
    Outcome outcome = outcome_of(job);
    ++counts[static_cast<int>(outcome)];
    if (outcome != Outcome::succeeded && outcome != Outcome::service_stopped)
      unsuccessful.push_back(&job);
  }
  std::sort(unsuccessful.begin(), unsuccessful.end(),
            [](const FinishedJob* a, const FinishedJob* b) { return a->id < b->id; });

  std::string text = "runner: ";
  if (jobs.empty()) {
    text += "no jobs ran";
  } else {
    std::size_t services = counts[int(Outcome::service_stopped)];
    text += count_of(jobs.size() - services, "job", "jobs") + ": ";
    text += fmt::format("{} succeeded, {} failed", counts[int(Outcome::succeeded)],
                        counts[int(Outcome::failed)]);
    if (counts[int(Outcome::lost)]) text += fmt::format(", {} lost", counts[int(Outcome::lost)]);
    if (counts[int(Outcome::cancelled)]) {
      text += fmt::format(", {} cancelled", counts[int(Outcome::cancelled)]);
    }
    std::size_t lost_outputs = static_cast<std::size_t>(
        std::count_if(jobs.begin(), jobs.end(),
                      [](const FinishedJob& job) { return !job.outputs_problem.empty(); }));
    if (lost_outputs) text += fmt::format(", {} with lost outputs", lost_outputs);
    if (services) text += "; " + count_of(services, "service", "services") + " stopped at the end";
  }
  text += "; wall time " + format_duration(wall_time) + "\n";

  std::size_t listed = std::min(max_listed, unsuccessful.size());
  for (std::size_t i = 0; i < listed; ++i) {
    const FinishedJob& job = *unsuccessful[i];
    text += fmt::format("  #{}", job.id);
    if (!job.label.empty()) text += " [" + job.label + "]";
    text += " " + describe_exit(job.exit);
    if (job.duration.count() > 0) text += " after " + format_duration(job.duration);
    if (!job.log_path.empty()) text += " — log: " + job.log_path;
    text += "\n";
    std::string command = shorten_command(job.command);
    if (!command.empty()) text += "      " + command + "\n";
  }
  if (listed < unsuccessful.size()) {
    text += fmt::format("  … and {} more\n", unsuccessful.size() - listed);
  }
  return text;
}

std::string format_energy(double joules) {
  if (joules < 1000) return fmt::format("{:.0f} J", joules);
  if (joules < 1e6) return fmt::format("{:.{}f} kJ", joules / 1e3, joules < 1e4 ? 2 : 1);
  return fmt::format("{:.{}f} MJ", joules / 1e6, joules < 1e7 ? 2 : 1);
}

std::string format_run_summary(const std::vector<FinishedJob>& jobs,
                               const std::vector<SlotUsage>& slots,
                               std::chrono::milliseconds wall_time, std::size_t slowest,
                               std::size_t max_slots, std::size_t max_listed) {
  std::string counts = format_summary(jobs, wall_time, max_listed);
  std::size_t first_end = counts.find('\n') + 1;
  std::string text = counts.substr(0, first_end);

  if (!jobs.empty() && !slots.empty() && wall_time.count() > 0) {
    long long busy = 0;
    for (const SlotUsage& slot : slots) busy += slot.busy.count();
    long long available = wall_time.count() * static_cast<long long>(slots.size());
    text += fmt::format("runner: slots busy {}% of the time ({} of {} slot time)\n",
                        busy * 100 / std::max(1LL, available),
                        format_duration(std::chrono::milliseconds(busy)),
                        format_duration(std::chrono::milliseconds(available)));
    std::vector<const SlotUsage*> shown;
    for (const SlotUsage& slot : slots) shown.push_back(&slot);
    if (shown.size() > max_slots) {
      std::stable_sort(shown.begin(), shown.end(),
                       [](const SlotUsage* a, const SlotUsage* b) { return a->busy < b->busy; });
      shown.resize(max_slots);
      text += fmt::format("  the {} least busy of {} slots:\n", max_slots, slots.size());
    }
    std::size_t label_width = 0, time_width = 0;
    for (const SlotUsage* slot : shown) {
      label_width = std::max(label_width, utf8_length(slot->label));
      time_width = std::max(time_width, format_duration(slot->busy).size());
    }
    for (const SlotUsage* slot : shown) {
      long long percent = std::min<long long>(100, slot->busy.count() * 100 / wall_time.count());
      text += fmt::format("  {}{}  {:>{}}  {:>3}%  {}\n", slot->label,
                          std::string(label_width - utf8_length(slot->label), ' '),
                          format_duration(slot->busy), time_width, percent,
                          count_of(slot->jobs, "job", "jobs"));
      if (slot->gpu_energy_j) text.insert(text.size() - 1, "  " + format_energy(*slot->gpu_energy_j));
    }
    std::optional<double> energy;
    for (const SlotUsage& slot : slots)
      if (slot.gpu_energy_j) energy = energy.value_or(0) + *slot.gpu_energy_j;
    if (energy)
      text += fmt::format("runner: GPU energy {} (where slots' GPUs were read)\n",
                          format_energy(*energy));
  }

  if (jobs.size() > 1 && slowest > 0) {
    std::vector<const FinishedJob*> by_duration;
    for (const FinishedJob& job : jobs) by_duration.push_back(&job);
    std::size_t n = std::min(slowest, by_duration.size());
    std::partial_sort(by_duration.begin(), by_duration.begin() + n, by_duration.end(),
                      [](const FinishedJob* a, const FinishedJob* b) {
                        return a->duration != b->duration ? a->duration > b->duration
                                                          : a->id < b->id;
                      });
    text += "runner: slowest jobs\n";
    for (std::size_t i = 0; i < n; ++i) {
      const FinishedJob& job = *by_duration[i];
      text += fmt::format("  #{}", job.id);
      if (!job.label.empty()) text += " [" + job.label + "]";
      text += " " + format_duration(job.duration) + "  " + shorten_command(job.command, 80) + "\n";
    }
  }

  if (first_end < counts.size()) text += "runner: failed jobs\n" + counts.substr(first_end);

  text += problems_section(jobs, &FinishedJob::log_problem,
                           "incomplete job logs (output that could not be written is missing)");
  text += problems_section(jobs, &FinishedJob::outputs_problem,
                           "lost outputs (files that came back but could not be written here)");
  return text;
}

}  // namespace runner
