// The dry-run plan: a simulation of placement with equal job durations,
// rendering every job on the slots it gets.
#include "runner/report/dry_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "runner/config/multi_node.h"
#include "runner/config/pattern.h"
#include "runner/config/service.h"
#include "runner/config/template.h"

namespace runner {

namespace {

// When each host could start a job of `k` slots (the k-th earliest free
// time of its slots, not before `earliest`), hosts with fewer left out,
// soonest first.
std::vector<std::pair<std::size_t, int>> host_start_times(const Fleet& fleet,
                                                          const std::vector<std::size_t>& free_at,
                                                          std::size_t k, std::size_t earliest) {
  std::vector<std::pair<std::size_t, int>> starts;
  for (std::size_t h = 0; h < fleet.hosts.size(); ++h) {
    const std::vector<int>& host_slots = fleet.hosts[h].slots;
    if (host_slots.size() < k) continue;
    std::vector<std::size_t> times;
    for (int s : host_slots) times.push_back(free_at[s]);
    std::nth_element(times.begin(), times.begin() + (k - 1), times.end());
    starts.emplace_back(std::max(earliest, times[k - 1]), static_cast<int>(h));
  }
  std::stable_sort(starts.begin(), starts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return starts;
}

// The variables a service's ready line will give the jobs after it
// (NAME.GROUP), each standing for itself: its value is known only once the
// service is ready.
Params awaited_service_variables(const ServiceSpec& service) {
  Params variables;
  if (service.name.empty() || service.ready_log.empty()) return variables;
  Result<Pattern> pattern = compile_ready_pattern(service.ready_log);
  if (!pattern) return variables;  // refused where the queue is checked
  for (const std::string& group : pattern->group_names()) {
    std::string name = service.name + "." + group;
    variables.emplace_back(name, "<<" + name + ">>");
  }
  return variables;
}

}  // namespace

Status plan_jobs(const std::vector<QueueEntry>& entries, const Fleet& fleet,
                 const std::string& queue_path, JobPlacement placement,
                 const std::function<void(const PlannedJob&)>& each) {
  // When each slot is free again, in units of one job's duration.
  std::vector<std::size_t> free_at(fleet.slots.size(), 0);
  std::size_t last_start = 0;
  std::size_t number = 0;
  Params service_variables;  // those of the services planned so far
  Status planned_all;        // the first job that cannot be planned ends the plan

  auto add = [&](const QueueEntry& entry, const JobSpec& job, std::vector<int> slots,
                 std::size_t wave, Params builtins, std::optional<int> rank) {
    if (!planned_all) return;
    builtins.insert(builtins.end(), service_variables.begin(), service_variables.end());
    PlannedJob planned;
    planned.number = number;
    planned.spec = job;
    planned.label = slots_label(fleet, slots);
    if (rank) planned.label += fmt::format(" rank {}", *rank);
    planned.rank = rank.value_or(0);
    Result<std::string> command = render_job(job, fleet, slots, builtins);
    if (!command && command.status().kind() == ErrorKind::undefined) {
      planned_all = Status::at(queue_path, entry.line, entry.column,
                               fmt::format("{} on {} (define it in the job or on every slot of "
                                           "the hosts that can run it)",
                                           command.status().message(), planned.label));
      return;
    }
    if (!command) {
      planned_all = Status::at(queue_path, entry.line, entry.column, command.status().message());
      return;
    }
    planned.command = std::move(*command);
    planned.slots = std::move(slots);
    planned.wave = wave;
    each(planned);
    if (!job.service) return;
    for (Param& variable : awaited_service_variables(*job.service))
      if (!find_param(service_variables, variable.first))
        service_variables.push_back(std::move(variable));
  };

  for (const QueueEntry& entry : entries) {
    for_each_job(entry, [&](const JobSpec& job) {
      if (!planned_all) return;
      ++number;
      if (placement == JobPlacement::broadcast) {
        for (std::size_t s = 0; s < fleet.slots.size(); ++s)
          add(entry, job, {static_cast<int>(s)}, number - 1, {}, std::nullopt);
        return;
      }
      std::size_t k = static_cast<std::size_t>(std::max(1, job.slots));
      auto starts = host_start_times(fleet, free_at, k, last_start);
      // `every: host`: a copy on each host that has the slots.
      std::size_t nodes = job.every_host ? std::max<std::size_t>(1, starts.size())
                                         : static_cast<std::size_t>(job.nodes.value_or(1));
      if (starts.size() < nodes) {
        planned_all = Status::at(
            queue_path, entry.line, entry.column,
            job.nodes ? fmt::format("this job needs {} nodes with {} slots each, but the hosts "
                                    "file has {} such host{}",
                                    nodes, k, starts.size(), starts.size() == 1 ? "" : "s")
                      : fmt::format("this job needs {} slots of one host, but no host has that "
                                    "many",
                                    k));
        return;
      }
      // It starts when the last of the hosts it needs is free, on the first
      // hosts free then, in hosts.yaml order, as the scheduler places it.
      std::size_t when = starts[nodes - 1].first;
      std::vector<int> hosts;
      for (const auto& [start, host] : starts)
        if (start <= when) hosts.push_back(host);
      std::sort(hosts.begin(), hosts.end());
      NodeLayout layout;
      for (std::size_t rank = 0; rank < nodes; ++rank) {
        const Host& host = fleet.hosts[hosts[rank]];
        std::vector<int> slots;
        for (int s : host.slots) {
          if (slots.size() == k) break;
          if (free_at[s] <= when) slots.push_back(s);
        }
        for (int s : slots) free_at[s] = when + 1;
        layout.addresses.push_back(node_address(fleet, slots, host.address.host));
        layout.ranks.push_back(std::move(slots));
      }
      last_start = when;
      if (job.every_host) {
        for (auto& slots : layout.ranks) add(entry, job, std::move(slots), when, {}, std::nullopt);
        return;
      }
      if (!job.nodes) {
        add(entry, job, std::move(layout.ranks.front()), when, {}, std::nullopt);
        return;
      }
      // The port runner tries first; the run takes one that is free then.
      layout.master_port = k_first_master_port;
      layout.hostfile = fmt::format("/tmp/runner-RUN-{}-LAUNCH.hostfile", number);
      for (std::size_t rank = 0; rank < nodes; ++rank)
        add(entry, job, layout.ranks[rank], when,
            multi_node_variables(job, layout, static_cast<int>(rank)), static_cast<int>(rank));
    });
    if (!planned_all) return planned_all;
  }
  return planned_all;
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
  // A step's `push:` comes first, and may be all it does.
  std::string what = job.command;
  if (!job.spec.push.empty()) {
    std::string push = fmt::format("(push {} into {})", job.spec.push,
                                   job.spec.push_to.empty() ? "the login directory"
                                                            : job.spec.push_to);
    what = what.empty() ? push : push + " " + what;
  }
  std::string_view rest = what;
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
