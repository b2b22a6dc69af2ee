// Private to the report area: the results section of `runner report`'s
// page (results_table.h): its plots, then the table. Pure.
#pragma once

#include <string>
#include <vector>

#include "runner/report/line_plot.h"
#include "runner/report/results_table.h"

namespace runner {

// "<h2>Results …</h2>", one inline SVG per plot, and <table id="results">.
std::string html_results_section(const ResultsTable& table, const std::vector<LinePlot>& plots);

}  // namespace runner
