// Small text helpers for assertions on what programs printed.
#pragma once

#include <string>

namespace runner::testing {

// How many times `needle` occurs in `text`, overlapping occurrences included.
int count(const std::string& text, const std::string& needle);

// Whether a line of runner's stdout is its note of a job's start or end
// ("[slot] === #3 run '...' ===", "[slot] === #3 done (exit 0) after 1s ===").
bool is_job_note(const std::string& line);

// runner's stdout without those notes: the jobs' own lines.
std::string job_lines(const std::string& out);

}  // namespace runner::testing
