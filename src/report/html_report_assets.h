// Private to the report area: the style sheet and the script that
// html_report writes inline into its page (nothing is fetched).
#pragma once

#include <string_view>

namespace runner {

// The page's CSS.
extern const std::string_view k_report_style;

// Draws the jobs table from the JSON in #job-data, sorts it by a clicked
// column, and lights up every bar of the job under the pointer.
extern const std::string_view k_report_script;

}  // namespace runner
