// Private to the report area: a big campaign's timeline drawn as runs of
// bars. Past a number of bars a page would be too heavy to open, so each
// slot's consecutive jobs of one outcome, with no visible gap between them,
// become one bar. Pure.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "html_report_model.h"

namespace runner {

// Consecutive attempts on one slot, of one outcome, drawn as one bar.
struct ReportBarRun {
  std::size_t row = 0;    // in HtmlReportModel::slots
  SystemTime start;       // the first one's start
  SystemTime end;         // the last one's end
  std::size_t first = 0;  // indices into HtmlReportModel::jobs
  std::size_t last = 0;
  std::size_t first_bar = 0;  // which of the first one's bars (a job on several slots has more)
  std::size_t count = 0;      // attempts in the run
};

// The bars of `model`'s jobs, each slot's in time order, merged into runs
// of the same outcome whose gaps are at most `gap`; services and jobs on
// several slots are never merged. A run of one attempt is that attempt's bar.
std::vector<ReportBarRun> timeline_runs(const HtmlReportModel& model,
                                        std::chrono::milliseconds gap);

// Every bar the model's jobs have (a job on several slots has one per slot).
std::size_t bar_count(const HtmlReportModel& model);

}  // namespace runner
