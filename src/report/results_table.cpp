// The results table: the campaign's jobs as rows, their parameters and
// metrics as columns.
#include "runner/report/results_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "runner/report/service_status.h"

namespace runner {

namespace {

// The fixed columns between the parameters and the metrics.
constexpr std::string_view k_run_columns[] = {"host", "slot",       "outcome",
                                              "exit", "duration_s", "attempts"};

// The columns of a job's GPU figures, after the fixed ones when some job
// has them.
constexpr std::string_view k_gpu_columns[] = {"gpu_energy_j", "gpu_power_mean_w",
                                              "gpu_power_max_w", "gpu_util_mean",
                                              "gpu_mem_max_mib"};

std::vector<std::string> gpu_cells(const CampaignJob& job) {
  if (!job.gpu) return std::vector<std::string>(std::size(k_gpu_columns));
  const GpuFigures& gpu = *job.gpu;
  return {fmt::format("{:.3f}", gpu.energy_j), fmt::format("{:.3f}", gpu.power_mean_w),
          fmt::format("{:.3f}", gpu.power_max_w), fmt::format("{:.1f}", gpu.util_mean),
          fmt::format("{:.0f}", gpu.memory_max_mib)};
}

// A metric's name as a job gives it, and where it comes from.
struct MetricKey {
  bool from_file = false;  // else a `metrics:` pattern
  std::string name;
  bool operator==(const MetricKey&) const = default;
};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void add_names(std::vector<std::string>& names, const Params& params) {
  for (const auto& [name, value] : params)
    if (!contains(names, name)) names.push_back(name);
}

void add_keys(std::vector<MetricKey>& keys, bool from_file, const Params& metrics) {
  for (const auto& [name, value] : metrics) {
    MetricKey key{from_file, name};
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
}

// The column name of `name`: itself, or when that is taken `prefix` and
// itself, then with ".2", ".3", ... after it; taken from then on.
std::string free_name(std::vector<std::string>& taken, const std::string& name,
                      std::string_view prefix) {
  std::string written = name;
  if (contains(taken, written)) written = std::string(prefix) + name;
  for (int n = 2; contains(taken, written); ++n) written = fmt::format("{}{}.{}", prefix, name, n);
  taken.push_back(written);
  return written;
}

std::string outcome_cell(const CampaignJob& job) {
  if (job.is_service()) return std::string(service_state_name(service_attempt_state(job)));
  return std::string(outcome_name(job.outcome));
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

}  // namespace

std::optional<std::size_t> ResultsTable::column(std::string_view name) const {
  auto at = std::find(columns.begin(), columns.end(), name);
  if (at == columns.end()) return std::nullopt;
  return static_cast<std::size_t>(at - columns.begin());
}

std::vector<const CampaignJob*> last_attempts(const Campaign& campaign, ServiceRows services) {
  std::vector<const CampaignJob*> rows;
  std::unordered_map<JobId, std::size_t> row_of;
  for (const CampaignJob& job : campaign.jobs) {
    if (job.is_service() && services == ServiceRows::left_out) continue;
    auto [at, added] = row_of.try_emplace(job.id, rows.size());
    if (added)
      rows.push_back(&job);
    else
      rows[at->second] = &job;
  }
  return rows;
}

ResultsTable results_table(const Campaign& campaign, const MetricsOf& metrics_of,
                           ServiceRows services) {
  bool with_services = services == ServiceRows::included;
  std::vector<const CampaignJob*> jobs = last_attempts(campaign, services);
  std::vector<std::string> params;
  std::vector<MetricKey> metric_keys;
  std::vector<JobMetrics> metrics;
  bool with_gpu = false;
  for (const CampaignJob* job : jobs) {
    with_gpu = with_gpu || job->gpu.has_value();
    add_names(params, job->params);
    metrics.push_back(metrics_of(*job));
    add_keys(metric_keys, true, metrics.back().files);
    add_keys(metric_keys, false, metrics.back().patterns);
  }

  // Names: the fixed columns keep theirs, then parameters, then `metrics:`
  // patterns, then the files' fields take theirs if still free.
  ResultsTable table;
  std::vector<std::string> fixed = {"id"};
  if (with_services) fixed.push_back("service");
  std::vector<std::string> taken = fixed;
  std::vector<std::string> run_columns(std::begin(k_run_columns), std::end(k_run_columns));
  if (with_gpu) run_columns.insert(run_columns.end(), std::begin(k_gpu_columns), std::end(k_gpu_columns));
  taken.insert(taken.end(), run_columns.begin(), run_columns.end());
  for (const std::string& name : params)
    table.parameters.push_back(free_name(taken, name, "param."));
  std::vector<std::string> metric_names(metric_keys.size());
  for (bool from_file : {false, true})
    for (std::size_t i = 0; i < metric_keys.size(); ++i)
      if (metric_keys[i].from_file == from_file)
        metric_names[i] = free_name(taken, metric_keys[i].name, from_file ? "file." : "metrics.");

  table.columns = fixed;
  table.columns.insert(table.columns.end(), table.parameters.begin(), table.parameters.end());
  table.columns.insert(table.columns.end(), run_columns.begin(), run_columns.end());
  table.columns.insert(table.columns.end(), metric_names.begin(), metric_names.end());
  std::size_t param_column = fixed.size();
  std::size_t run_column = param_column + params.size();
  std::size_t metric_column = run_column + run_columns.size();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const CampaignJob& job = *jobs[i];
    std::vector<std::string> row(table.columns.size());
    row[0] = std::to_string(job.id);
    if (with_services) row[1] = job.service == "true" ? "#" + row[0] : job.service;
    for (const auto& [name, value] : job.params)
      row[param_column + static_cast<std::size_t>(std::find(params.begin(), params.end(), name) -
                                                  params.begin())] = value;
    std::string run_cells[] = {job.host,       job.slot,           outcome_cell(job),
                               exit_cell(job), duration_cell(job), std::to_string(job.attempt)};
    std::copy(std::begin(run_cells), std::end(run_cells), row.begin() + run_column);
    if (with_gpu) {
      std::vector<std::string> gpu = gpu_cells(job);
      std::copy(gpu.begin(), gpu.end(), row.begin() + run_column + std::size(k_run_columns));
    }
    for (bool from_file : {false, true})
      for (const auto& [name, value] : from_file ? metrics[i].files : metrics[i].patterns) {
        auto at = std::find(metric_keys.begin(), metric_keys.end(), MetricKey{from_file, name});
        row[metric_column + static_cast<std::size_t>(at - metric_keys.begin())] = value;
      }
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace runner
