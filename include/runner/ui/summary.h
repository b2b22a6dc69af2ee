// The end-of-run summary: how many jobs ran and how they ended, then one
// entry per job that did not succeed, with its slot, why, its log and its
// command. Pure formatting; the caller prints the text.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "runner/exec/transport.h"

namespace runner {

// One finished job, as the summary sees it.
struct FinishedJob {
  JobId id = 0;
  std::string label;    // slot label, "node01 gpu=0"; empty if it never got one
  std::string command;  // rendered command
  JobExit exit;
  std::string log_path;  // empty if there is none
  std::chrono::milliseconds duration{0};
  bool cancelled = false;  // the runner itself stopped it (interrupt)
};

// "850ms", "4.2s", "3m 05s", "2h 03m 10s", "3d 04h 05m".
std::string format_duration(std::chrono::milliseconds duration);

// `command` on one line (whitespace runs, newlines included, become one
// space), cut to at most `max_chars` characters with a trailing "…".
std::string shorten_command(std::string_view command, std::size_t max_chars = 100);

// The summary, every line ending in '\n':
//   runner: 12 jobs: 9 succeeded, 2 failed, 1 lost; wall time 1h 02m 03s
//     #12 [node01 gpu=0] exit 3 after 4m 10s — log: q.runner/logs/12.log
//         python bench.py --model llama-7B
// Lost and cancelled counts appear only when non-zero. Unsuccessful jobs are
// listed by id, at most `max_listed` of them, then "… and N more".
std::string format_summary(const std::vector<FinishedJob>& jobs,
                           std::chrono::milliseconds wall_time, std::size_t max_listed = 50);

}  // namespace runner
