// The dry-run plan: a simulation of placement with equal job durations,
// rendering every job on the slots it gets.
#include "runner/report/dry_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "runner/config/config_error.h"
#include "runner/config/template.h"

namespace runner {

void plan_jobs(const std::vector<QueueEntry>& entries, const Fleet& fleet,
               const std::string& queue_path, JobPlacement placement,
               const std::function<void(const PlannedJob&)>& each) {
  // When each slot is free again, in units of one job's duration.
  std::vector<std::size_t> free_at(fleet.slots.size(), 0);
  std::size_t last_start = 0;
  std::size_t number = 0;

  auto add = [&](const QueueEntry& entry, const JobSpec& job, std::vector<int> slots,
                 std::size_t wave) {
    PlannedJob planned;
    planned.number = number;
    planned.spec = job;
    planned.label = slots_label(fleet, slots);
    try {
      planned.command = render_job(job, fleet, slots);
    } catch (const UndefinedVariable& undefined) {
      throw ConfigError(queue_path, entry.line, entry.column,
                        fmt::format("<<{}>> is not defined on {} (define it in the job or on "
                                    "every slot of the hosts that can run it)",
                                    undefined.name, planned.label));
    } catch (const TemplateError& error) {
      throw ConfigError(queue_path, entry.line, entry.column, error.message);
    }
    planned.slots = std::move(slots);
    planned.wave = wave;
    each(planned);
  };

  for (const QueueEntry& entry : entries) {
    for_each_job(entry, [&](const JobSpec& job) {
      ++number;
      if (placement == JobPlacement::broadcast) {
        for (std::size_t s = 0; s < fleet.slots.size(); ++s)
          add(entry, job, {static_cast<int>(s)}, number - 1);
        return;
      }
      std::size_t k = static_cast<std::size_t>(std::max(1, job.slots));
      std::size_t best_time = std::numeric_limits<std::size_t>::max();
      int best_host = -1;
      for (std::size_t h = 0; h < fleet.hosts.size(); ++h) {
        const std::vector<int>& host_slots = fleet.hosts[h].slots;
        if (host_slots.size() < k) continue;
        std::vector<std::size_t> times;
        for (int s : host_slots) times.push_back(free_at[s]);
        std::nth_element(times.begin(), times.begin() + (k - 1), times.end());
        std::size_t when = std::max(last_start, times[k - 1]);
        if (when < best_time) {
          best_time = when;
          best_host = static_cast<int>(h);
        }
      }
      if (best_host < 0) {
        throw ConfigError(queue_path, entry.line, entry.column,
                          fmt::format("this job needs {} slots of one host, but no host has that "
                                      "many",
                                      k));
      }
      std::vector<int> slots;
      for (int s : fleet.hosts[best_host].slots) {
        if (slots.size() == k) break;
        if (free_at[s] <= best_time) slots.push_back(s);
      }
      for (int s : slots) free_at[s] = best_time + 1;
      last_start = best_time;
      add(entry, job, std::move(slots), best_time);
    });
  }
}

std::size_t plan_number_width(const std::vector<QueueEntry>& entries) {
  std::size_t jobs = 0;
  for (const QueueEntry& entry : entries) {
    std::size_t more = job_count(entry);
    jobs = more > std::numeric_limits<std::size_t>::max() - jobs
               ? std::numeric_limits<std::size_t>::max()
               : jobs + more;
  }
  return std::to_string(jobs).size();
}

std::string format_planned_job(const PlannedJob& job, std::size_t number_width) {
  std::string text;
  if (number_width > 0) text = fmt::format("{:>{}} ", job.number, number_width);
  text += "[" + job.label + "] ";
  std::string indent(number_width > 0 ? number_width + 1 : 0, ' ');
  indent += "    ";
  std::string_view rest = job.command;
  bool first = true;
  while (true) {
    std::size_t eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    if (!first) text += indent;
    text.append(line);
    text.push_back('\n');
    first = false;
    if (eol == std::string_view::npos || eol + 1 >= rest.size()) break;
    rest.remove_prefix(eol + 1);
  }
  return text;
}

}  // namespace runner
