// How a job ended, in the words every view uses: the console's warnings,
// the end-of-run summary, `runner status`, `runner log` and the report.
#pragma once

#include <string>

#include "runner/core/job_exit.h"

namespace runner {

// "exit 3", "killed by TERM", the error, "timed out (killed by TERM)",
// "cancelled (exit 130)", "lost" or "lost: <error>".
std::string describe_exit(const JobExit& exit);

}  // namespace runner
