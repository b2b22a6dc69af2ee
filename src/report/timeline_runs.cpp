// Merging a slot's consecutive bars of one outcome into runs.
#include "timeline_runs.h"

#include <algorithm>
#include <tuple>

namespace runner {

std::size_t bar_count(const HtmlReportModel& model) {
  std::size_t bars = 0;
  for (const ReportJob& shown : model.jobs) bars += shown.bars.size();
  return bars;
}

std::vector<ReportBarRun> timeline_runs(const HtmlReportModel& model,
                                        std::chrono::milliseconds gap) {
  // Every bar as (row, start, job, which of its bars); a job on several
  // slots or a service stays a run of its own.
  std::vector<std::tuple<std::size_t, SystemTime, std::size_t, std::size_t>> bars;
  bars.reserve(bar_count(model));
  for (std::size_t j = 0; j < model.jobs.size(); ++j)
    for (std::size_t b = 0; b < model.jobs[j].bars.size(); ++b)
      bars.emplace_back(model.jobs[j].bars[b].row, model.jobs[j].bars[b].start, j, b);
  std::sort(bars.begin(), bars.end());

  auto mergeable = [&](std::size_t j) {
    const ReportJob& shown = model.jobs[j];
    return shown.bars.size() == 1 && !shown.job->is_service();
  };
  std::vector<ReportBarRun> runs;
  for (const auto& [row, start, j, b] : bars) {
    const ReportJob& shown = model.jobs[j];
    if (!runs.empty()) {
      ReportBarRun& run = runs.back();
      const ReportJob& previous = model.jobs[run.last];
      if (run.row == row && mergeable(j) && mergeable(run.last) &&
          previous.job->outcome == shown.job->outcome && start - run.end <= gap) {
        run.end = std::max(run.end, shown.end);
        run.last = j;
        ++run.count;
        continue;
      }
    }
    runs.push_back(ReportBarRun{row, start, shown.end, j, j, b, 1});
  }
  return runs;
}

}  // namespace runner
