// Private to the report area: the results section of `runner report`'s
// page (results_table.h): its plots, then the table. Pure.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/report/line_plot.h"
#include "runner/report/results_table.h"

namespace runner {

// "<h2>Results …</h2>", one inline SVG per plot, and <table id="results">:
// its rows in the markup, or past `max_rows_in_markup` as JSON in
// <script id="results-data"> that the page's script draws.
std::string html_results_section(const ResultsTable& table, const std::vector<LinePlot>& plots,
                                 std::size_t max_rows_in_markup);

// `data` as JSON that can sit inside a <script> element.
std::string script_json(const nlohmann::json& data);

}  // namespace runner
