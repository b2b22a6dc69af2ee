// `runner results`: the campaign of a state directory as one table on
// stdout, a row per job with its parameters and metrics.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/report/job_metrics.h"
#include "runner/report/results_table.h"
#include "runner/report/results_where.h"
#include "runner/state/state_dir.h"
#include "runner/ui/console.h"
#include "subcommand.h"

namespace runner {

ResultsTable rows_where_options(const ResultsTable& table, const std::vector<std::string>& where) {
  std::vector<RowCondition> conditions;
  for (const std::string& text : where) {
    std::optional<RowCondition> condition = parse_row_condition(text);
    if (!condition)
      throw ConfigError(fmt::format("--where {}: write COLUMN=VALUE, e.g. model=mlp", text));
    conditions.push_back(std::move(*condition));
  }
  Result<ResultsTable> rows = rows_where(table, conditions);
  if (!rows) throw ConfigError(fmt::format("--where: {}", rows.status().message()));
  for (const std::string& unmet : unmatched_conditions(table, conditions))
    fmt::print(stderr, "runner: warning: --where: {}\n", unmet);
  return std::move(*rows);
}

int show_results(const ResultsOptions& options) {
  std::optional<ResultsFormat> format = parse_results_format(options.format);
  if (!format)
    throw ConfigError("--format " + options.format + ": write csv, tsv, jsonl or markdown");
  std::string state_dir =
      options.state_dir.empty() ? state_dir_for(options.queue_file) : options.state_dir;
  Campaign campaign = load_recorded_campaign(state_dir);
  Console console(stdout, stderr, ColorMode::never, 1);
  ResultsTable table = rows_where_options(
      read_results(campaign, options.services ? ServiceRows::included : ServiceRows::left_out,
                   [&](const std::string& note) { console.warn(note); }),
      options.where);
  std::fflush(stdout);
  return write_all(STDOUT_FILENO, format_results(table, *format)) ? 0 : 1;
}

Subcommand add_results_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<ResultsOptions>();
  auto* results = add_campaign_command(
      app, "results", "Print one table of a campaign: a row per job, its parameters and metrics",
      defaults, options->queue_file, options->state_dir);
  results->add_option("--format", options->format, "csv (default), tsv, jsonl or markdown")
      ->check(CLI::IsMember({"csv", "tsv", "jsonl", "markdown"}));
  results->add_flag("--services", options->services,
                    "Add a row for each service (`service:`), with its state");
  results->add_option("--where", options->where,
                      "Only the rows whose COLUMN is VALUE: COLUMN=VALUE (repeatable; several "
                      "values of one column: any of them)");
  set_example(*results, "runner results --queue-file queue.yaml --format markdown");
  return {results, [options] { return show_results(*options); }};
}

}  // namespace runner
