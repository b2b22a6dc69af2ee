// The boundary between scheduling and I/O. An Executor runs tasks (one
// process each) on one host, over SSH or as local processes; a Backend makes
// one per host. The scheduler starts and signals its jobs' tasks through
// this interface, and asks for everything else through the typed
// operations of HostOps (host_ops.h), built on it; unit tests substitute
// scripted fakes for both.
//
// Threading: none. Executors are passive: the event loop asks for their
// file descriptors and deadline, polls, and calls step(); every event is
// delivered to ExecutorEvents from inside step() (or connect()).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/config/params.h"
#include "runner/core/job_exit.h"
#include "runner/core/output_file.h"
#include "runner/core/pollable.h"
#include "runner/core/status.h"

namespace runner {

// How much of one output stream of a task an executor reads in one step, so
// that a task writing as fast as it can leaves the event loop to the others.
inline constexpr std::size_t k_output_share = 256 * 1024;

// Receives what executors observe.
class ExecutorEvents {
 public:
  virtual ~ExecutorEvents() = default;
  virtual void host_ready(int host) = 0;
  // The host is unusable (`error` says why, and its kind whether trying
  // again can help). Every task it was running gets task_exited with lost =
  // true before this is called; but ErrorKind::ended (the allocation of
  // every host is ending) is said first, and its tasks end as Slurm ends
  // them.
  virtual void host_failed(int host, const Status& error) = 0;
  // The task's process group exists; pgid is its id on the host.
  virtual void task_started(TaskId task, long pgid) = 0;
  virtual void task_output(TaskId task, OutputStream stream, std::string_view bytes) = 0;
  virtual void task_exited(TaskId task, const JobExit& exit) = 0;
  // `signal` (from signal_task) may not have reached the task's process
  // group: the host's shell could not run `kill`, or it failed. `why` names
  // the host and the cause.
  virtual void signal_failed(TaskId task, int signal, const std::string& why) = 0;
};

// What a task needs on its host besides its command (a rank of a
// multi-node job): variables exported to its process, and files written
// before it starts (path, content).
struct TaskSetup {
  Params environment;
  std::vector<std::pair<std::string, std::string>> files;
  // How many of its host's slots it holds: a Slurm step asks for as many
  // GPUs.
  int slots = 1;
  bool empty() const { return environment.empty() && files.empty(); }
};

// Ids of the runner's own commands on a host (Executor::start_own_task);
// task ids stay far below.
inline constexpr TaskId k_first_own_command_id = TaskId{1} << 62;

// One host: its connection(s) and the tasks running there. Implementations
// (SSH, local processes) start tasks and signal them; the typed operations
// the scheduler also needs (the runner's own commands, killing leftovers,
// copying files) are built above, in HostOps, so the scheduler never
// writes shell.
class Executor : public Pollable {
 public:
  Executor(int host, ExecutorEvents& events);

  // Starts connecting. Reports host_ready or host_failed (possibly at once).
  virtual void connect() = 0;
  // Runs `command` exactly as `sh -c '<command>'` would, in its own process
  // group, stdin empty. Only called after host_ready. Reports task_started,
  // task_output..., task_exited.
  virtual void start_task(TaskId task, const std::string& command) = 0;
  // start_task, the task's stdin the bytes of the local file `input` (then
  // its end) instead of empty.
  virtual void start_task_reading(TaskId task, const std::string& command,
                                  const std::string& input) = 0;
  // start_task, after writing `setup`'s files and exporting its variables
  // (in the task's own shell: a file that cannot be written fails the task).
  void start_task_with(TaskId task, const std::string& command, const TaskSetup& setup);
  // start_task for a task that holds `slots` of the host's slots; an
  // executor whose tasks ask for resources by the slot (a Slurm step, for
  // its GPUs) says so here.
  virtual void start_task_on_slots(TaskId task, const std::string& command, int slots) {
    start_task(task, command);
  }
  // Sends `signal` (SIGTERM, SIGKILL, ...) to the task's whole process group.
  virtual void signal_task(TaskId task, int signal) = 0;
  // Closes connections once no task runs. idle() is true when done.
  virtual void shutdown() = 0;
  virtual bool idle() const = 0;
  // The address by which other hosts reach this one: the host name it is
  // connected to (ssh config's HostName), 127.0.0.1 for local processes.
  virtual std::string address() const = 0;

  // Where the output and the end of a task of the runner's own go,
  // instead of to the events.
  struct OwnTaskHandler {
    std::function<void(OutputStream stream, std::string_view bytes)> output;
    std::function<void(const JobExit& exit)> exited;
  };
  // Starts the runner's own command as start_task starts a task, under an
  // id of its own (returned, for signal_task); its output and end go to
  // `handler`; with an `input`, its stdin is that local file (as
  // start_task_reading). Only after host_ready; `exited` runs with a lost
  // exit if the host fails first.
  TaskId start_own_task(const std::string& command, OwnTaskHandler handler,
                        const std::optional<std::string>& input = std::nullopt);
  // The mark the processes of `task` carry (process_group.h): unique to
  // this executor and the task. Implementations put it in the environment
  // of the process whose group they report with task_started.
  std::string group_mark(TaskId task) const;

 protected:
  int host() const { return m_host; }
  // What implementations report. Ends and output of the runner's own
  // commands are taken here; the rest goes to the events.
  void report_ready() { m_events.host_ready(m_host); }
  void report_failed(const Status& error);
  void report_started(TaskId task, long pgid);
  void report_output(TaskId task, OutputStream stream, std::string_view bytes);
  void report_exited(TaskId task, const JobExit& exit);
  void report_signal_failed(TaskId task, int signal, const std::string& why);

 private:
  int m_host;
  ExecutorEvents& m_events;
  std::string m_mark_prefix;  // random: group_mark's part that is this executor's
  TaskId m_next_own_id = k_first_own_command_id;
  std::map<TaskId, OwnTaskHandler> m_own;
};

}  // namespace runner
