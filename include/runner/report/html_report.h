// `runner report`: one self-contained HTML page (inline CSS, SVG and a few
// lines of script; nothing fetched) that shows a campaign after the fact:
// a timeline per slot with one bar per job coloured by outcome (hover for
// command, exit status, duration; a big campaign's consecutive jobs of one
// outcome on a slot share a bar), how busy each slot was, the slowest
// jobs, the failures with their log tails, the results table with its
// plots when asked, and every job in a table sortable by any column. Pure:
// the caller gives the campaign, the time, the log tails and the results.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/report/campaign.h"
#include "runner/report/line_plot.h"
#include "runner/report/results_table.h"
#include "runner/state/gpu_power_series.h"

namespace runner {

struct HtmlReportOptions {
  std::string title;              // what the page is about, e.g. the queue file
  SystemTime now;                 // where running jobs' bars end
  std::vector<std::string> runs;  // ids of the runs to show; empty: the latest
  bool all_runs = false;          // every run of the journal
  // The end of a job's log, shown under each failure; none when unset.
  std::function<std::string(const CampaignJob&)> log_tail;
  std::size_t max_failure_logs = 200;  // failures beyond this are listed without logs
  std::size_t slowest = 10;
  // Past this many job bars, a slot's consecutive jobs of one outcome are
  // drawn as one bar.
  std::size_t max_timeline_bars = 20'000;
  // Past this many rows, the results table is data that the page's script
  // draws a page at a time.
  std::size_t max_results_rows_in_markup = 2'000;
  // The results section (results_table.h): the table, then these plots.
  std::optional<ResultsTable> results;
  std::vector<LinePlot> plots;
  // The GPUs' power over time, as the runs recorded it (gpu_power_series.h).
  std::vector<GpuPowerPoint> gpu_power;
};

// The page. Every job bar is an SVG <rect class="job ..."> with data-job
// set to its id (one per slot for a job on several slots), every job a row
// of <table id="jobs">. Past max_timeline_bars, a run of jobs on a slot is
// one <rect class="jobs ..."> with data-jobs set to how many.
std::string render_html_report(const Campaign& campaign, const HtmlReportOptions& options);

// `text` with &, <, >, " and ' replaced by character references.
std::string html_escape(std::string_view text);

}  // namespace runner
