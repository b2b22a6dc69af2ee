// What the HTML report shows, in one pass over the campaign's shown runs.
#include "html_report_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace runner {

namespace {

using std::chrono::milliseconds;

// `part` as a percentage of `whole`, at most 100.
long long percent_of(milliseconds part, milliseconds whole) {
  return whole.count() > 0 ? std::min<long long>(100, part.count() * 100 / whole.count()) : 0;
}

// The runs named by the options; the latest when they name none.
std::vector<const CampaignRun*> shown_runs(const Campaign& campaign,
                                           const HtmlReportOptions& options) {
  std::vector<const CampaignRun*> runs;
  for (const CampaignRun& run : campaign.runs) {
    bool named = std::find(options.runs.begin(), options.runs.end(), run.id) != options.runs.end();
    if (options.all_runs || named) runs.push_back(&run);
  }
  if (runs.empty() && options.runs.empty() && campaign.latest_run())
    runs.push_back(campaign.latest_run());
  return runs;
}

}  // namespace

HtmlReportModel html_report_model(const Campaign& campaign, const HtmlReportOptions& options) {
  HtmlReportModel model;
  std::vector<const CampaignRun*> runs = shown_runs(campaign, options);

  // Their slots, in fleet order, then any slot only their jobs name.
  std::vector<ReportSlot>& rows = model.slots;
  std::map<std::pair<std::string, int>, std::size_t> row_of;
  auto add_row = [&](const std::string& host, int index, const std::string& label) {
    auto [it, inserted] = row_of.try_emplace({host, index}, rows.size());
    if (inserted) rows.push_back(ReportSlot{label, host, index});
    return it->second;
  };
  for (const CampaignRun* run : runs)
    for (const CampaignSlot& slot : run->slots) add_row(slot.host, slot.index, slot.label);

  model.t0 = runs.empty() ? options.now : runs.front()->start;
  model.t1 = model.t0;
  for (const CampaignRun* run : runs) {
    SystemTime run_end = run->alive ? options.now : run->end.value_or(run->last_event);
    model.t0 = std::min(model.t0, run->start);
    model.t1 = std::max(model.t1, run_end);
    model.available += time_between(run->start, run_end);
    for (std::size_t index : run->jobs) {
      const CampaignJob& job = campaign.jobs[index];
      ReportJob shown{&job, job_end_time(job, run, options.now)};
      shown.took = time_between(job.start, shown.end);
      model.t1 = std::max(model.t1, shown.end);
      for (const CampaignTask& task : tasks_of(job)) {
        for (int i : task.slot_indices) {
          std::size_t r = add_row(
              task.host, i,
              task.slot_indices.size() == 1 ? task.slot : fmt::format("{} #{}", task.host, i));
          rows[r].busy += time_between(task.start, shown.end);
          ++rows[r].jobs;
          shown.bars.push_back(ReportBar{r, task.start, task.rank});
        }
      }
      model.jobs.push_back(std::move(shown));
    }
    for (const auto& [host, message] : run->host_failures)
      for (ReportSlot& row : rows)
        if (row.host == host) row.down = message;
    model.runs.push_back(run_status(campaign, *run, std::nullopt, options.now));
    for (ServiceStatus& service : model.runs.back().services) {
      bool failed = service.state == ServiceState::failed;
      model.service_log_tails.push_back(failed && options.log_tail
                                            ? std::optional(options.log_tail(*service.job))
                                            : std::nullopt);
      model.services.push_back(std::move(service));
    }
  }

  long long busy_total = 0;
  for (ReportSlot& row : rows) {
    row.busy_percent = percent_of(row.busy, model.available);
    busy_total += row.busy.count();
  }
  long long slot_time = model.available.count() * static_cast<long long>(rows.size());
  model.utilisation = slot_time > 0 ? std::min<long long>(100, busy_total * 100 / slot_time) : 0;

  for (const ReportJob& shown : model.jobs) {
    const CampaignJob& job = *shown.job;
    if (job.is_service()) continue;
    ++model.job_attempts;
    if (job.rerun) continue;
    ++model.outcome_counts[static_cast<std::size_t>(job.outcome)];
    ++model.job_count;
    bool failed = job.outcome == JobOutcome::failed || job.outcome == JobOutcome::lost ||
                  job.outcome == JobOutcome::unknown;
    if (!failed) continue;
    ReportFailure failure{&job};
    if (options.log_tail && model.failures.size() < options.max_failure_logs)
      failure.log_tail = options.log_tail(job);
    model.failures.push_back(std::move(failure));
  }

  for (std::size_t i = 0; i < model.jobs.size(); ++i)
    if (!model.jobs[i].job->is_service()) model.slowest.push_back(i);
  std::size_t n = std::min(options.slowest, model.slowest.size());
  std::partial_sort(
      model.slowest.begin(), model.slowest.begin() + n, model.slowest.end(),
      [&](std::size_t a, std::size_t b) { return model.jobs[a].took > model.jobs[b].took; });
  model.slowest.resize(n);
  return model;
}

}  // namespace runner
