// Private to exec: how a local executor turns a task into a process and
// delivers a signal to it. The plain one runs `sh -c <command>` and signals
// its process group; the Slurm one (slurm_backend.cpp) runs the command in
// a step of the allocation through a local `srun`, and signals the step.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "runner/core/job_exit.h"
#include "runner/core/status.h"

namespace runner {

// A program to start: its path and its argv (argv[0] included).
struct LaunchCommand {
  std::string path;
  std::vector<std::string> argv;
};

class LocalLaunch {
 public:
  virtual ~LocalLaunch() = default;
  // What runs `command` for `task`, which holds `slots` of its host's slots.
  virtual LaunchCommand command_for(TaskId task, const std::string& command, int slots) = 0;
  // Sends `signal` to what runs `task`, whose process group is `pgid`.
  // Returns an empty string, or why the signal could not be sent.
  virtual std::string deliver(TaskId task, pid_t pgid, int signal) = 0;
  // How the task ended, from its process's wait status.
  virtual JobExit exit_of(int wait_status) = 0;
  // The address by which other hosts reach where tasks run (Executor::address).
  virtual std::string address() const = 0;
  // Ok, or (ErrorKind::ended) why no task can run here any more, once an
  // exit_of() has found it: the Slurm allocation is ending.
  virtual Status ending() const { return Status(); }
};

// `sh -c <command>` in a process group of its own, signalled as a group.
class ShellLaunch : public LocalLaunch {
 public:
  LaunchCommand command_for(TaskId task, const std::string& command, int slots) override;
  std::string deliver(TaskId task, pid_t pgid, int signal) override;
  JobExit exit_of(int wait_status) override;
  std::string address() const override { return "127.0.0.1"; }
};

class Executor;
class ExecutorEvents;

// A local executor whose tasks `launch` starts and signals.
std::unique_ptr<Executor> make_local_executor(int host, ExecutorEvents& events,
                                              std::unique_ptr<LocalLaunch> launch);

}  // namespace runner
