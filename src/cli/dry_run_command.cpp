// `runner queue --dry-run` and `runner broadcast --dry-run`: validate the
// fleet and the queue, then print every job with the slot it would get and
// its rendered command. Connects to no host, runs nothing and writes no file
// (not even the state directory).
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "fatal.h"
#include "run_fleet.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/config/hosts.h"
#include "runner/config/job_render.h"
#include "runner/queue/queue_file.h"
#include "runner/report/dry_run.h"
#include "runner/ui/console.h"

namespace runner {

int dry_run_jobs(const RunOptions& options) {
  RunFleet run_fleet = load_run_fleet(
      options, [](const std::string& m) { fmt::print(stderr, "runner: warning: {}\n", m); });
  const Fleet& fleet = run_fleet.fleet;
  if (run_fleet.allocation) fmt::print("{}", describe_slurm_fleet(run_fleet));
  if (!std::filesystem::exists(options.queue_file))
    throw ConfigError(options.queue_file, 0, 0,
                      "queue file not found (create it, or pass --queue-file)");
  QueueFile queue(options.queue_file);
  std::vector<QueueEntry> entries = value_or_fatal(queue.read_entries());
  JobPlacement placement =
      options.mode == Mode::queue ? JobPlacement::queue : JobPlacement::broadcast;
  fatal_unless(validate_jobs(entries, fleet, options.queue_file, placement));

  // Line by line, as planned: a million-job product prints in the memory of one job.
  std::fflush(stdout);
  constexpr std::size_t k_flush_bytes = 1 << 16;
  std::string pending;
  std::size_t number_width = plan_number_width(entries);
  std::size_t jobs = 0;
  std::size_t at_once = 0;
  fatal_unless(plan_jobs(entries, fleet, options.queue_file, placement, [&](const PlannedJob& job) {
    jobs = job.number;
    if (job.wave == 0 && job.rank == 0) ++at_once;
    pending += format_planned_job(job, number_width);
    if (pending.size() >= k_flush_bytes) {
      write_all(fileno(stdout), pending);
      pending.clear();
    }
  }));
  write_all(fileno(stdout), pending);
  std::string what;
  if (options.mode == Mode::broadcast) {
    what = fmt::format("{} job{}, each on all {} slots", jobs, jobs == 1 ? "" : "s",
                       fleet.slots.size());
  } else {
    what = fmt::format("{} job{} on {} slots; {} start at once", jobs, jobs == 1 ? "" : "s",
                       fleet.slots.size(), at_once);
    if (at_once < jobs) what += ", the slots of later ones assume every job takes as long";
  }
  std::fflush(stderr);
  write_all(fileno(stderr),
            fmt::format("runner: dry run of {}: {}; nothing ran and no file was changed\n",
                        options.queue_file, what));
  return 0;
}

}  // namespace runner
