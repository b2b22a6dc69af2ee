// A plot of the results table (`runner report --plot METRIC:X:SERIES`): a
// metric against a column, one line per combination of the values of other
// columns, or the metric relative to a baseline configuration. Pure.
//
// Threading: none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/result.h"
#include "runner/report/line_plot.h"
#include "runner/report/results_table.h"
#include "runner/report/results_where.h"

namespace runner {

// What to plot: column names of the results table.
struct PlotRequest {
  std::string metric;  // y
  std::string x;
  std::vector<std::string> series;  // a line per combination of their values; empty: one line
  // `METRIC/COLUMN=VALUE`: y is each job's metric over the mean metric of
  // the jobs that have VALUE in COLUMN and the same other parameters.
  std::optional<RowCondition> baseline;
};

// "METRIC[/COLUMN=VALUE]:X[:S1,S2,...]", e.g. "throughput:batch:model",
// "throughput:batch:model,fusion", "throughput/fusion=off:batch:model";
// nullopt for anything else. A `/` in METRIC without `=` after it is part of
// the metric's name (`tokens/s`).
std::optional<PlotRequest> parse_plot_request(std::string_view text);

// The request written back as parse_plot_request reads it.
std::string plot_request_text(const PlotRequest& request);

// The rows whose metric is a number (with a baseline: whose baseline's
// metric is a number, not 0; the baseline's rows are not drawn), as lines,
// one per combination of the series columns' values (in the order first
// seen), each point's x its row's x column: numbers, sorted, when every
// such row's x is a number, else categories in the order first seen. The
// rows of one line at one x are one point: their mean, their least and
// most; when they differ in a parameter other than x and the series'
// columns, a warning names it. An error names a column the table lacks and
// the columns it has, or a baseline no row has.
Result<LinePlot> results_plot(const ResultsTable& table, const PlotRequest& request);

}  // namespace runner
