// The report's results section: plots and the table of every job's
// parameters and metrics.
#include "html_results.h"

#include <fmt/format.h>

#include "runner/report/html_report.h"

namespace runner {

std::string html_results_section(const ResultsTable& table, const std::vector<LinePlot>& plots) {
  std::string out = fmt::format("<h2>Results ({} jobs)</h2>\n", table.rows.size());
  for (const LinePlot& plot : plots)
    out += "<div style=\"max-width:900px;margin:0 0 14px\">" + svg_line_plot(plot) + "</div>\n";
  out += "<div class=\"scroll\"><table id=\"results\"><thead><tr>";
  for (const std::string& column : table.columns) out += "<th>" + html_escape(column) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const std::string& cell : row) out += "<td>" + html_escape(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace runner
