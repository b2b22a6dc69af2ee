// The end-of-run summary: how many jobs ran and how they ended, then one
// entry per job that did not succeed, with its slot, why, its log and its
// command. Pure formatting; the caller prints the text.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/job_exit.h"

namespace runner {

// One finished job, as the summary sees it.
struct FinishedJob {
  JobId id = 0;
  std::string label;    // slot label, "node01 gpu=0"; empty if it never got one
  std::string command;  // rendered command
  JobExit exit;
  std::string log_path;  // empty if there is none
  std::chrono::milliseconds duration{0};
  // Why its log is not whole (output that could not be written); empty
  // when it is.
  std::string log_problem;
  // What of its outputs came back but could not be written here, and why
  // (a full disk); empty when nothing was lost.
  std::string outputs_problem;
  // A service (`service:`): stopped by the runner at the end, it is
  // counted apart from the jobs, not as cancelled.
  bool service = false;
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
// Lost and cancelled counts, and that of the jobs with lost outputs ("1
// with lost outputs"), appear only when non-zero. Unsuccessful jobs are
// listed by id, at most `max_listed` of them, then "… and N more".
std::string format_summary(const std::vector<FinishedJob>& jobs,
                           std::chrono::milliseconds wall_time, std::size_t max_listed = 50);

// How long one slot ran jobs during a run.
struct SlotUsage {
  std::string label;  // "node01 gpu=0"
  std::chrono::milliseconds busy{0};
  std::size_t jobs = 0;
  // The GPU energy of its jobs (a job on several slots shares its own out
  // evenly), where their GPUs were read.
  std::optional<double> gpu_energy_j;
};

// "850 J", "12.3 kJ", "4.56 MJ".
std::string format_energy(double joules);

// format_summary's counts line, then how busy the slots were and the
// slowest jobs, then the unsuccessful jobs under their own heading:
//   runner: 12 jobs: 10 succeeded, 2 failed; wall time 1h 02m 03s
//   runner: slots busy 62% of the time (5h 10m of 8h 16m slot time)
//     node01 gpu=0  1h 02m 03s  100%  4 jobs  1.20 MJ
//     node01 gpu=1     12m 05s   19%  2 jobs  85.3 kJ
//   runner: GPU energy 1.29 MJ (where slots' GPUs were read)
//   runner: slowest jobs
//     #7 [node01 gpu=0] 40m 10s  python bench.py --model llama-7B
//   runner: failed jobs
//     #12 [node01 gpu=0] exit 3 after 4m 10s — log: q.runner/logs/12.log
//         python bench.py --model llama-7B
//   runner: incomplete job logs (output that could not be written is missing)
//     #14 [node01 gpu=1] its log q.runner/logs/14.log is incomplete: …
//   runner: lost outputs (files that came back but could not be written here)
//     #15 [node01 gpu=0] big.bin: No space left on device
// Every slot is listed when there are at most `max_slots`, otherwise the
// `max_slots` least busy ones. The slowest list is left out for one job.
std::string format_run_summary(const std::vector<FinishedJob>& jobs,
                               const std::vector<SlotUsage>& slots,
                               std::chrono::milliseconds wall_time, std::size_t slowest = 5,
                               std::size_t max_slots = 16, std::size_t max_listed = 50);

}  // namespace runner
