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
// No two columns have one name.
struct ResultsTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column
  std::vector<std::string> parameters;         // the columns that are parameters

  // The position of the column of this name.
  std::optional<std::size_t> column(std::string_view name) const;
};

// A job's metrics, each name → value as written.
struct JobMetrics {
  Params patterns;  // its `metrics:` patterns' last matches in its log
  Params files;     // the numeric fields of the files collected from it
};
using MetricsOf = std::function<JobMetrics(const CampaignJob&)>;

// Whether the table has a row for each service (`service:`) too.
enum class ServiceRows { left_out, included };

// The jobs the table has a row for, in its order: each job id's last
// attempt, ids in the order they first started; services only when included.
std::vector<const CampaignJob*> last_attempts(const Campaign& campaign, ServiceRows services);

// One row per job of last_attempts, in its order; `metrics_of` is asked
// about each of them once, in that order. Columns: id,
// `service` (its name; only when services are included), then every
// parameter name any job has (first seen first), then host, slot, outcome
// (a service's is its state: stopped, ready, ...), exit (the status, or the
// signal that ended it: SIGTERM), duration_s (seconds, empty while it
// runs), attempts, then, when some job's GPUs were read, gpu_energy_j,
// gpu_power_mean_w, gpu_power_max_w, gpu_util_mean and gpu_mem_max_mib
// (empty for a job without them), then every metric name (first seen first). Names are
// never shared: a parameter named like one of those fixed columns is
// `param.NAME`, a `metrics:` pattern named like a parameter or fixed column
// is `metrics.NAME`, a collected file's field named like any of those is
// `file.NAME`, and a name still taken gets `.2`, `.3`, ... after it.
ResultsTable results_table(const Campaign& campaign, const MetricsOf& metrics_of,
                           ServiceRows services = ServiceRows::left_out);

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
