// A job's process group on its host, as the runner records it: the group's
// id, and the mark every process the job starts carries in its environment
// (RUNNER_JOB_MARK=<mark>). Once the job is gone, its id may be given to
// another group; only a group where some process carries the mark is still
// the job's, and only such a group is killed as the job's leftover.
#pragma once

#include <string>

namespace runner {

// The variable that holds a job's mark in its processes' environment.
inline constexpr const char* k_job_mark_variable = "RUNNER_JOB_MARK";

struct ProcessGroup {
  long id = 0;       // 0: never recorded
  std::string mark;  // empty: recorded by a runner that did not mark its jobs
  bool operator==(const ProcessGroup&) const = default;
};

}  // namespace runner
