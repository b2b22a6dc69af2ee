// A daemon that a test starts and stops itself: forked in a process group
// of its own, its output to a log file, stopped by its pid.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace runner::testing {

// Starts `args` (args[0] a path) with stdin from /dev/null and stdout and
// stderr to `log`, the variables of `environment` set (or, with an empty
// value, unset) on top of ours. Throws std::runtime_error when it cannot fork.
pid_t launch_daemon(const std::vector<std::string>& args, const std::string& log,
                    const std::map<std::string, std::string>& environment);

// Stops `pid` (SIGTERM, then SIGKILL once `grace` passed) and reaps it.
void stop_daemon(pid_t pid, std::chrono::milliseconds grace = std::chrono::seconds(1));

}  // namespace runner::testing
