// `runner status`: what a running (or finished) campaign does, read from
// its state directory and its queue file, never writing either; once, or
// refreshed with --watch.
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "fatal.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/queue/queue_file.h"
#include "runner/report/campaign_index.h"
#include "runner/report/status_view.h"
#include "runner/state/state_dir.h"
#include "runner/ui/console.h"
#include "subcommand.h"

namespace runner {

namespace {

std::size_t terminal_width(int fd) {
  winsize size{};
  if (isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 120;
}

// The queue a run drained, as seen from here.
std::string queue_of(const CampaignRun& run) {
  std::filesystem::path queue(run.queue_file);
  if (queue.is_relative() && !run.cwd.empty()) queue = std::filesystem::path(run.cwd) / queue;
  return queue.string();
}

}  // namespace

std::optional<std::size_t> count_queued_jobs(const std::string& queue_file) {
  std::error_code error;
  if (!std::filesystem::exists(queue_file, error)) return 0;
  Result<std::vector<QueueEntry>> entries = QueueFile(queue_file).read_entries();
  if (!entries) return std::nullopt;
  std::size_t jobs = 0;
  for (const QueueEntry& entry : *entries) jobs += job_count(entry);
  return jobs;
}

int show_status(const StatusOptions& options) {
  std::string queue_file = options.queue_file.empty() ? "queue.yaml" : options.queue_file;
  std::string state_dir = options.state_dir.empty() ? state_dir_for(queue_file) : options.state_dir;
  bool clear_screen = options.watch && !options.json && isatty(STDOUT_FILENO) == 1;
  for (bool first = true;; first = false) {
    Campaign campaign = value_or_fatal(load_recent_campaign(state_dir)).campaign;
    if (first) std::fputs(skipped_lines_warning(campaign).c_str(), stderr);
    const CampaignRun* run = campaign.latest_run();
    if (!run) {
      throw ConfigError(state_dir, 0, 0,
                        "no run is recorded here; start one with `runner queue`, or name the "
                        "campaign with --queue-file or --state-dir");
    }
    std::optional<std::size_t> queued =
        count_queued_jobs(options.queue_file.empty() ? queue_of(*run) : options.queue_file);
    RunStatus status = run_status(campaign, *run, queued, std::chrono::system_clock::now());
    std::string text;
    if (options.json) {
      text = status_json(status, state_dir).dump(options.watch ? -1 : 2) + "\n";
    } else {
      text = format_status(status, state_dir, terminal_width(STDOUT_FILENO));
      if (clear_screen) {
        text = "\x1b[H\x1b[2J" + text;
      } else if (!first) {
        text = "\n" + text;
      }
    }
    std::fflush(stdout);
    if (!write_all(STDOUT_FILENO, text)) return 1;
    if (!options.watch || status.state != "running") return 0;
    ::poll(nullptr, 0, static_cast<int>(options.interval * 1000));
  }
}

Subcommand add_status_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<StatusOptions>();
  auto* status =
      add_campaign_command(app, "status", "Show what a running (or finished) campaign does",
                           defaults, options->queue_file, options->state_dir);
  status->add_flag("--json", options->json, "One JSON object (one line per refresh with --watch)");
  status->add_flag("-w,--watch", options->watch, "Refresh until the run ends");
  status->add_option("--interval", options->interval, "Seconds between refreshes (default 2)")
      ->check(CLI::PositiveNumber);
  set_example(*status, "runner status --queue-file queue.yaml --watch");
  return {status, [options] { return show_status(*options); }};
}

}  // namespace runner
