// `runner results`: the campaign of a state directory as one table on
// stdout, a row per job with its parameters and metrics.
#include <unistd.h>

#include <cstdio>

#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/report/job_metrics.h"
#include "runner/report/results_table.h"
#include "runner/state/state_dir.h"
#include "runner/ui/console.h"

namespace runner {

int show_results(const ResultsOptions& options) {
  std::optional<ResultsFormat> format = parse_results_format(options.format);
  if (!format)
    throw ConfigError("--format " + options.format + ": write csv, tsv, jsonl or markdown");
  std::string state_dir =
      options.state_dir.empty() ? state_dir_for(options.queue_file) : options.state_dir;
  Campaign campaign = load_recorded_campaign(state_dir);
  ResultsTable table =
      read_results(campaign, options.services ? ServiceRows::included : ServiceRows::left_out);
  std::fflush(stdout);
  return write_all(STDOUT_FILENO, format_results(table, *format)) ? 0 : 1;
}

}  // namespace runner
