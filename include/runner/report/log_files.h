// The job logs of a state directory as the observing commands read them:
// where each is, and the end of one for people. Reading only.
//
// Threading: none.
#pragma once

#include <cstddef>
#include <string>

#include "runner/core/job_exit.h"

namespace runner {

// state_dir/logs/<id>.log, the log of a job without `nodes:`.
std::string job_log_path(const std::string& state_dir, JobId id);

// state_dir/logs/<id>.<rank>.log, the log of one rank of a gang job.
std::string task_log_path(const std::string& state_dir, JobId id, int rank);

// The last `max_lines` lines of the last `max_bytes` bytes of a log: '\r'
// ends a line as '\n' does (progress bars), terminal escape sequences are
// removed. Empty for a missing log.
std::string log_tail(const std::string& path, std::size_t max_lines = 20,
                     std::size_t max_bytes = 16 * 1024);

}  // namespace runner
