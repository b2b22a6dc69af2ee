// `runner report`: the campaign of a state directory as one HTML page,
// written beside the journal (or where --output says).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "fatal.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/queue/queue_file.h"
#include "runner/report/campaign.h"
#include "runner/report/html_report.h"
#include "runner/report/job_metrics.h"
#include "runner/report/results_plot.h"
#include "runner/state/gpu_power_series.h"
#include "runner/state/state_dir.h"
#include "runner/ui/console.h"
#include "subcommand.h"

namespace runner {

namespace {

constexpr std::size_t k_log_tail_lines = 25;

}  // namespace

Campaign load_recorded_campaign(const std::string& state_dir) {
  Campaign campaign = value_or_fatal(load_campaign(state_dir));
  std::fputs(skipped_lines_warning(campaign).c_str(), stderr);
  if (campaign.runs.empty()) {
    throw ConfigError(state_dir, 0, 0,
                      "no run is recorded here; start one with `runner queue`, or name the "
                      "campaign with --queue-file or --state-dir");
  }
  return campaign;
}

int write_report(const ReportOptions& options) {
  std::string state_dir =
      options.state_dir.empty() ? state_dir_for(options.queue_file) : options.state_dir;
  Campaign campaign = load_recorded_campaign(state_dir);
  for (const std::string& run : options.runs) {
    if (!campaign.find_run(run))
      throw ConfigError(state_dir, 0, 0, fmt::format("no run {} is recorded here", run));
  }

  HtmlReportOptions html;
  const CampaignRun& latest = *campaign.latest_run();
  html.title = latest.queue_file.empty() ? options.queue_file : latest.queue_file;
  html.now = std::chrono::system_clock::now();
  html.runs = options.runs;
  html.all_runs = options.all_runs;
  html.gpu_power = read_gpu_power_series(gpu_power_series_path(state_dir));
  html.log_tail = [&](const CampaignJob& job) {
    return log_tail(end_log_path(state_dir, job), k_log_tail_lines);
  };
  Console console(stdout, stderr, ColorMode::never, 1);
  html.results = rows_where_options(
      read_results(campaign, ServiceRows::left_out,
                   [&](const std::string& note) { console.warn(note); }),
      options.where);
  for (const std::string& text : options.plots) {
    std::optional<PlotRequest> request = parse_plot_request(text);
    if (!request)
      throw ConfigError(fmt::format(
          "--plot {}: write METRIC:X:SERIES, e.g. throughput:batch:model (METRIC:X for one line, "
          "throughput:batch:model,fusion for a line per model and fusion, "
          "throughput/fusion=off:batch:model for throughput relative to fusion=off's)",
          text));
    Result<LinePlot> plot = results_plot(*html.results, *request);
    if (!plot) throw ConfigError(fmt::format("--plot {}: {}", text, plot.status().message()));
    for (const std::string& warning : plot->warnings)
      fmt::print(stderr, "runner: warning: --plot {}: {}\n", text, warning);
    html.plots.push_back(std::move(*plot));
  }
  std::string page = render_html_report(campaign, html);

  if (options.output == "-") {
    std::fflush(stdout);
    return write_all(STDOUT_FILENO, page) ? 0 : 1;
  }
  std::string output = options.output.empty() ? state_dir + "/report.html" : options.output;
  if (Status written = write_file_atomically(output, page); !written)
    throw StateError("cannot write the report " + output + ": " + written.message());
  std::fflush(stdout);
  write_all(STDOUT_FILENO, output + "\n");
  return 0;
}

Subcommand add_report_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<ReportOptions>();
  auto* report = add_campaign_command(app, "report", "Write an HTML report of a campaign", defaults,
                                      options->queue_file, options->state_dir);
  report->add_option("-o,--output", options->output,
                     "Where to write it (default: report.html in the state directory; - for "
                     "stdout)");
  report->add_option("--run", options->runs, "Show this run (repeatable; default the latest)");
  report->add_flag("--all", options->all_runs, "Show every run of the state directory");
  report->add_option("--plot", options->plots,
                     "Plot a metric of the results against a parameter, one line per value of "
                     "others: METRIC:X:SERIES[,SERIES...], or relative to a baseline: "
                     "METRIC/COLUMN=VALUE:X:SERIES (repeatable)");
  report->add_option("--where", options->where,
                     "Show and plot only the results whose COLUMN is VALUE: COLUMN=VALUE "
                     "(repeatable; several values of one column: any of them)");
  set_example(*report, "runner report --queue-file queue.yaml --plot throughput:batch:model");
  return {report, [options] { return write_report(*options); }};
}

}  // namespace runner
