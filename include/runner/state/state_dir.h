// Where a run keeps its files: a state directory beside the queue file
// (queue.yaml -> queue.runner/) holding the journal and the job logs.
#pragma once

#include <stdexcept>
#include <string>

namespace runner {

// A state file or directory cannot be created, opened or read. The message
// names the path and the system's reason.
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

// Creates `state_dir` and its logs/ folder if they do not exist. Throws
// StateError.
void ensure_state_dir(const std::string& state_dir);

}  // namespace runner
