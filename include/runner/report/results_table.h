// `runner results`: a campaign as one table, a row per job (its last
// attempt) with its parameters, where and how it ran, and the metrics it
// produced; and the table as CSV, TSV, JSON lines or Markdown. Pure: the
// caller gives each job's metrics (job_metrics.h reads them).
//
// Threading: none.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/params.h"
#include "runner/report/campaign.h"

namespace runner {

// Columns and rows of text; a cell is empty where a job has no such value.
struct ResultsTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column

  // The position of the column of this name.
  std::optional<std::size_t> column(std::string_view name) const;
};

// A job's metrics, name → value (job_metrics).
using MetricsOf = std::function<Params(const CampaignJob&)>;

// One row per job id of the campaign, in the order the jobs first started,
// described by its last attempt. Columns: id, then every parameter name
// any job has (first seen first), then host, slot, outcome, exit (the
// status, or the signal that ended it: SIGTERM), duration_s (seconds, empty
// while it runs), attempts, then every metric name (first seen first).
ResultsTable results_table(const Campaign& campaign, const MetricsOf& metrics_of);

enum class ResultsFormat { csv, tsv, jsonl, markdown };

// "csv", "tsv", "jsonl", "markdown"; nullopt otherwise.
std::optional<ResultsFormat> parse_results_format(std::string_view name);

// The table as text, every line ending in '\n'. CSV quotes a cell holding a
// comma, quote or line break (RFC 4180); TSV writes tabs and line breaks in
// a cell as spaces; JSON lines are one object per row, keyed by column, a
// cell that is a JSON number written as a number, an empty cell as null;
// Markdown is a GitHub table, `|` escaped.
std::string format_results(const ResultsTable& table, ResultsFormat format);

}  // namespace runner
