// The results table: the campaign's jobs as rows, their parameters and
// metrics as columns.
#include "runner/report/results_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

namespace runner {

namespace {

// The fixed columns between the parameters and the metrics.
constexpr std::string_view k_run_columns[] = {"host", "slot",       "outcome",
                                              "exit", "duration_s", "attempts"};

void add_names(std::vector<std::string>& names, const Params& params) {
  for (const auto& [name, value] : params)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

std::string exit_cell(const CampaignJob& job) {
  if (job.exit) return std::to_string(*job.exit);
  if (!job.signal.empty()) return "SIG" + job.signal;
  return std::string();
}

std::string duration_cell(const CampaignJob& job) {
  if (!job.end) return std::string();
  return fmt::format("{:.3f}", static_cast<double>(job.duration.count()) / 1000.0);
}

void fill(std::vector<std::string>& row, const std::vector<std::string>& names,
          std::size_t first_column, const Params& values) {
  for (const auto& [name, value] : values) {
    auto at = std::find(names.begin(), names.end(), name);
    if (at != names.end()) row[first_column + static_cast<std::size_t>(at - names.begin())] = value;
  }
}

}  // namespace

std::optional<std::size_t> ResultsTable::column(std::string_view name) const {
  auto at = std::find(columns.begin(), columns.end(), name);
  if (at == columns.end()) return std::nullopt;
  return static_cast<std::size_t>(at - columns.begin());
}

ResultsTable results_table(const Campaign& campaign, const MetricsOf& metrics_of) {
  // Each id's last attempt, ids in the order they first started.
  std::vector<JobId> ids;
  std::map<JobId, const CampaignJob*> last;
  for (const CampaignJob& job : campaign.jobs) {
    if (!last.count(job.id)) ids.push_back(job.id);
    last[job.id] = &job;
  }
  std::vector<std::string> params;
  std::vector<std::string> metric_names;
  std::vector<Params> metrics;
  for (JobId id : ids) {
    add_names(params, last[id]->params);
    metrics.push_back(metrics_of(*last[id]));
    add_names(metric_names, metrics.back());
  }

  ResultsTable table;
  table.columns.push_back("id");
  table.columns.insert(table.columns.end(), params.begin(), params.end());
  table.columns.insert(table.columns.end(), std::begin(k_run_columns), std::end(k_run_columns));
  table.columns.insert(table.columns.end(), metric_names.begin(), metric_names.end());
  std::size_t run_column = 1 + params.size();
  std::size_t metric_column = run_column + std::size(k_run_columns);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const CampaignJob& job = *last[ids[i]];
    std::vector<std::string> row(table.columns.size());
    row[0] = std::to_string(job.id);
    fill(row, params, 1, job.params);
    std::string run_cells[] = {
        job.host,       job.slot,           std::string(outcome_name(job.outcome)),
        exit_cell(job), duration_cell(job), std::to_string(job.attempt)};
    std::copy(std::begin(run_cells), std::end(run_cells), row.begin() + run_column);
    fill(row, metric_names, metric_column, metrics[i]);
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace runner
