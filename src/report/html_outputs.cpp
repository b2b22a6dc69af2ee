#include "html_outputs.h"

#include <fmt/format.h>

#include "runner/report/html_report.h"

namespace runner {

std::string html_outputs_section(const std::vector<const CampaignJob*>& jobs) {
  std::string rows;
  std::size_t count = 0;
  for (const CampaignJob* job : jobs)
    for (const OutputFile& file : job->outputs) {
      ++count;
      rows += fmt::format(
          "<tr><td class=\"num\">#{}</td><td>{}</td><td class=\"num\">{}</td>"
          "<td class=\"cmd\">{}</td></tr>\n",
          job->id, html_escape(file.path), file.size,
          file.sha256.empty() ? "(not read)" : html_escape(file.sha256));
    }
  if (count == 0) return {};
  return fmt::format("<h2>Output files ({})</h2>\n<div class=\"scroll\"><table id=\"outputs\">"
                     "<thead><tr><th class=\"num\">job</th><th>path</th><th class=\"num\">bytes"
                     "</th><th>SHA-256</th></tr></thead><tbody>\n{}</tbody></table></div>\n",
                     count, rows);
}

}  // namespace runner
