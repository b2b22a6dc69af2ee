// A plot of the results table (`runner report --plot METRIC:X:SERIES`): a
// metric against a parameter, one line per value of another. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runner/core/result.h"
#include "runner/report/line_plot.h"
#include "runner/report/results_table.h"

namespace runner {

// What to plot: column names of the results table.
struct PlotRequest {
  std::string metric;  // y
  std::string x;
  std::string series;  // empty: one line
};

// "throughput:batch:model" or "throughput:batch"; nullopt for anything else.
std::optional<PlotRequest> parse_plot_request(std::string_view text);

// The rows whose metric is a number, as lines, one per value of the series
// column (in the order first seen), each point's x its row's x column:
// numbers, sorted, when every such row's x is a number, else categories in
// the order first seen. An error names a column the table lacks and the
// columns it has.
Result<LinePlot> results_plot(const ResultsTable& table, const PlotRequest& request);

}  // namespace runner
