// The report's results section: plots and the table of every job's
// parameters and metrics.
#include "html_results.h"


#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "runner/report/html_report.h"

namespace runner {

std::string script_json(const nlohmann::json& data) {
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  // Inside <script>, "</" must not appear; in JSON it can only be in strings.
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string html_results_section(const ResultsTable& table, const std::vector<LinePlot>& plots,
                                 std::size_t max_rows_in_markup) {
  std::string out = fmt::format("<h2>Results ({} jobs)</h2>\n", table.rows.size());
  for (const LinePlot& plot : plots) {
    out += "<div style=\"max-width:900px;margin:0 0 14px\">" + svg_line_plot(plot);
    for (const std::string& note : plot.notes)
      out += "<p class=\"muted\">" + html_escape(note) + "</p>";
    for (const std::string& warning : plot.warnings)
      out += "<p class=\"plot-warning\">Warning: " + html_escape(warning) + "</p>";
    out += "</div>\n";
  }
  bool drawn_by_script = table.rows.size() > max_rows_in_markup;
  if (drawn_by_script) out += "<p class=\"muted\"><span id=\"results-shown\"></span></p>\n";
  out += "<div class=\"scroll\"><table id=\"results\"><thead><tr>";
  for (const std::string& column : table.columns) out += "<th>" + html_escape(column) + "</th>";
  out += "</tr></thead><tbody>\n";
  if (drawn_by_script) {
    out +=
        "</tbody></table></div>\n<p><button id=\"results-more\">show 500 more</button></p>\n"
        "<script type=\"application/json\" id=\"results-data\">";
    return out + script_json(table.rows) + "</script>\n";
  }
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const std::string& cell : row) out += "<td>" + html_escape(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace runner
