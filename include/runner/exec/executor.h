// The boundary between scheduling and I/O. An Executor runs tasks (one
// process each) on one host, over SSH or as local processes; a Backend makes
// one per host. The scheduler only ever talks to this interface, and unit
// tests substitute a scripted fake.
//
// Threading: none. Executors are passive: the event loop asks for their
// file descriptors and deadline, polls, and calls step(); every event is
// delivered to ExecutorEvents from inside step() (or connect()).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/params.h"
#include "runner/core/job_exit.h"
#include "runner/core/output_file.h"
#include "runner/core/pollable.h"
#include "runner/core/process_group.h"
#include "runner/core/result.h"
#include "runner/core/status.h"
#include "runner/exec/output_unpacker.h"
#include "runner/exec/push_plan.h"

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

// What became of the process groups that lost or dead jobs left on a host,
// once the runner looked for them (Executor::kill_leftovers).
struct LeftoverCheck {
  std::vector<long> killed;  // groups that still existed, now sent SIGKILL
  std::vector<long> kept;    // groups that exist but are no longer the job's
  std::string error;         // non-empty: the host could not be asked, or
                             // its shell failed (what it said)
  bool lost = false;         // the host was lost before it answered
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

// A host's network, as a job that spans hosts needs it.
struct NetworkSurvey {
  std::set<int> ports_in_use;          // by a socket in any state
  std::set<int> listening_ports;       // by a socket that listens
  std::vector<std::string> addresses;  // the host's own, loopback excluded
};

// What get_files brought back: the files unpacked whole (path under the
// folder, size, SHA-256), those refused (with the words the host refused)
// and those that could not be written here (lost: a full disk, or a folder
// that cannot be made), and why the stream failed, if it did (`files`
// holds what came before).
struct FetchedFiles : UnpackedFiles {
  std::string missing;  // what the host said of patterns that matched nothing
  bool lost = false;    // the host was lost first
};

// The regular files of `sources` (files, and folders walked, symbolic
// links followed), each under its own name: `data/x` for `some/data/x`
// of the source `some/data`. Or the source that cannot be read, and why.
Result<std::vector<PushFile>> local_push_files(const std::vector<std::string>& sources);

// Ids of the runner's own commands on a host (Executor::run_command); task
// ids stay far below.
inline constexpr TaskId k_first_own_command_id = TaskId{1} << 62;

class PushArchive;

// One host: its connection(s) and the tasks running there. Implementations
// (SSH, local processes) start tasks and signal them; the typed operations
// the scheduler also needs (the runner's own commands, killing leftovers)
// are built here on top, so the scheduler never writes shell.
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
  // Pollable: the implementation's descriptors and step, then the
  // archives put_files waits for.
  void poll_fds(std::vector<pollfd>& out) final;
  void step(Clock::time_point now) final;
  // Closes connections once no task runs. idle() is true when done.
  virtual void shutdown() = 0;
  virtual bool idle() const = 0;
  // The address by which other hosts reach this one: the host name it is
  // connected to (ssh config's HostName), 127.0.0.1 for local processes.
  virtual std::string address() const = 0;

  // The runner's own command (a job's `cancel:` command), run as
  // start_task runs a task; its end and its first 64 KiB of output go to `done`, not to
  // the events. Only after host_ready; `done` runs with lost = true if the
  // host fails first. Returns its id, for signal_task.
  using CommandDone = std::function<void(const JobExit& exit, const std::string& output)>;
  TaskId run_command(const std::string& command, CommandDone done);
  // run_command, its stdout given to `on_stdout` as it comes, not kept.
  TaskId run_command_streaming(const std::string& command,
                               std::function<void(std::string_view)> on_stdout, CommandDone done);
  // run_command, its stdin the local file `input`.
  TaskId run_command_reading(const std::string& command, const std::string& input,
                             CommandDone done);
  // Sends SIGKILL to those of `groups` (process groups on this host) that
  // still exist and are still the job's (see process_group.h), and says
  // which were killed and which were left alone.
  void kill_leftovers(const std::vector<ProcessGroup>& groups,
                      std::function<void(const LeftoverCheck&)> done);
  // The mark the processes of `task` carry (process_group.h): unique to
  // this executor and the task. Implementations put it in the environment
  // of the process whose group they report with task_started.
  std::string group_mark(TaskId task) const;
  // Copies the files that `patterns` (shell words, globs expanded by the
  // host's sh in the login directory, e.g. `results/*.json`) name on the
  // host into the local folder `into` (made if missing), keeping their
  // paths, as one tar stream over the host's connection, unpacked as it
  // comes (OutputUnpacker). A word with a `..` is refused on the host.
  void get_files(const std::string& patterns, const std::string& into,
                 std::function<void(const FetchedFiles&)> done);
  // Copies `files` into the host's folder `to` (relative to the login
  // directory; made if missing), keeping their modes and times: first a
  // listing of what the host has, then one tar stream of the files it
  // lacks or has with another size, time or mode.
  void put_files(const std::vector<PushFile>& files, const std::string& to,
                 std::function<void(const PutResult&)> done);
  // Kills what put_files runs on the host now: each copy under way ends as
  // failed (a second interrupt stops a step's push as it stops jobs).
  void stop_transfers();
  // Removes `paths` (relative to the login directory) from the host, each
  // by its exact name, with as many `rm` commands as their length needs,
  // one after the other; `done` has the first that failed, or the last.
  void remove_files(const std::vector<std::string>& paths, CommandDone done);
  // What rank 0 of a job that spans hosts needs to know of its host, and
  // whether a service's `ready_port` listens: the local ports of its TCP
  // sockets (its /proc/net/tcp{,6}; none where it has no /proc) and its
  // addresses (`hostname -I`), or why they could not be read.
  void survey_network(std::function<void(Result<NetworkSurvey>)> done);

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
  // What an implementation polls, and does on each wake-up of the loop:
  // its own part of poll_fds() and step().
  virtual void poll_host_fds(std::vector<pollfd>& out) = 0;
  virtual void step_host(Clock::time_point now) = 0;

 private:
  struct AwaitedArchive {
    std::shared_ptr<PushArchive> archive;
    std::function<void(const Status&)> then;
  };
  // Runs `then` once `archive` is made (or could not be).
  void await_archive(std::shared_ptr<PushArchive> archive, std::function<void(const Status&)> then);
  // The archives put_files waits for while they are made: their pidfds
  // are polled with the host's descriptors, and they are looked at on
  // every step.
  void poll_archive_fds(std::vector<pollfd>& out) const;
  void step_archives();

  // Runs commands[next], then, if it succeeded, those after it.
  void run_in_turn(std::shared_ptr<std::vector<std::string>> commands, std::size_t next,
                   CommandDone done);

  struct OwnCommand {
    CommandDone done;
    std::string output;
    // Set: its stdout goes here as it comes (output keeps its stderr).
    std::function<void(std::string_view)> on_stdout;
  };

  int m_host;
  ExecutorEvents& m_events;
  std::string m_mark_prefix;  // random: group_mark's part that is this executor's
  TaskId m_next_own_id = k_first_own_command_id;
  std::map<TaskId, OwnCommand> m_own;
  // Counts `id`, an own command of put_files, as under way (if it has not
  // ended already).
  void track_transfer(TaskId id) {
    if (m_own.count(id)) m_transfers.insert(id);
  }
  std::set<TaskId> m_transfers;  // own commands of put_files under way
  std::vector<AwaitedArchive> m_awaited_archives;
};

}  // namespace runner
