// Where a run keeps its files: a state directory beside the queue file
// (queue.yaml -> queue.runner/) holding the journal and the job logs.
#pragma once

#include <stdexcept>
#include <string>

#include "runner/core/job_exit.h"
#include "runner/core/status.h"

namespace runner {

// What ends a command, thrown by cli alone (state returns a Status), when a
// state file or directory cannot be created, opened, read or written. The
// message names the path and the system's reason.
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `dir/queue.yaml` -> `dir/queue.runner`: strips a .yaml/.yml extension
// (any case) and appends ".runner". Pure.
std::string state_dir_for(const std::string& queue_path);

// `state_dir/logs`
std::string logs_dir(const std::string& state_dir);

// `state_dir/outputs`: the files collected from jobs, `outputs/<id>/...`
std::string outputs_dir(const std::string& state_dir);

// The folder of `outputs` (outputs_dir's, or --outputs-dir) that one
// attempt of a job brings its `outputs:` back into: `<id>` for its first,
// `<id>.attempt-<n>` for a later one, so that a failed attempt's files are
// never read as the job's.
std::string attempt_outputs_dir(const std::string& outputs, JobId job, int attempt);

// `state_dir/debug.log`: a run's steps with hosts and the reasons behind
// its decisions (rotated into debug.log.1, debug.log.2).
std::string debug_log_path(const std::string& state_dir);

// Creates `state_dir` and its logs/ folder if they do not exist; an error
// says why it could not.
Status ensure_state_dir(const std::string& state_dir);

}  // namespace runner
