// The typed operations the scheduler and the commands of the CLI need on
// one host besides its jobs' tasks: the runner's own commands, killing the
// leftovers of lost jobs, copying files both ways, and a look at its
// network (and, for `check --net`, its interfaces and whether it reaches
// others). Answers are typed values; how a host is asked (ShellHostOps:
// shell commands over an Executor) stays behind this interface, and unit
// tests substitute a fake that scripts the answers.
//
// Threading: none. Answers come from inside the step() of the executor it
// is built on or its own (it is a Pollable of the event loop), or at once
// when an operation cannot begin (get_files's folder cannot be made).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/gpu_free.h"
#include "runner/core/job_exit.h"
#include "runner/core/pollable.h"
#include "runner/core/process_group.h"
#include "runner/core/result.h"
#include "runner/exec/output_unpacker.h"
#include "runner/exec/push_plan.h"
#include "runner/probe/net_check_scripts.h"

namespace runner {

// What became of the process groups that lost or dead jobs left on a host,
// once the runner looked for them (HostOps::kill_leftovers).
struct LeftoverCheck {
  std::vector<long> killed;  // groups that still existed, now sent SIGKILL
  std::vector<long> kept;    // groups that exist but are no longer the job's
  std::string error;         // non-empty: the host could not be asked, or
                             // its shell failed (what it said)
  bool lost = false;         // the host was lost before it answered
};

// What a look at a host's GPUs found: what each GPU holds now, by index
// ("0"); or, when nvidia-smi could not tell, how its command ended and the
// first line it printed.
struct GpuLookAnswer {
  std::optional<std::map<std::string, GpuUsage>> usage;
  JobExit exit = JobExit::exited(0);
  std::string said;
};

// A host's network, as a job that spans hosts needs it.
struct NetworkSurvey {
  std::set<int> ports_in_use;          // by a socket in any state
  std::set<int> listening_ports;       // by a socket that listens
  std::vector<std::string> addresses;  // the host's own, loopback excluded
};

// What a host's connections to others' listeners met (probe_connections):
// a line per target, each what it read or why not, as far as they came
// before the host was lost, if it was.
struct ConnectionProbes {
  std::vector<ProbeAnswer> answers;
  bool lost = false;
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
// of the source `some/data`, for put_files. Or the source that cannot be
// read, and why.
Result<std::vector<PushFile>> local_push_files(const std::vector<std::string>& sources);

class HostOps : public Pollable {
 public:
  // The end of one of the runner's own commands, and its first 64 KiB of
  // output (stderr only, for a command whose stdout is streamed).
  using CommandDone = std::function<void(const JobExit& exit, const std::string& output)>;

  // The runner's own command (a job's `cancel:` or `after:` command, a
  // look at the GPUs), run as a job's task is run; its end goes to `done`.
  // Only after the host is ready; `done` runs with lost = true if the host
  // fails first. Returns its id, for stop_command.
  virtual TaskId run_command(const std::string& command, CommandDone done) = 0;
  // run_command, its stdout given to `on_stdout` as it comes, not kept.
  virtual TaskId run_command_streaming(const std::string& command,
                                       std::function<void(std::string_view)> on_stdout,
                                       CommandDone done) = 0;
  // Kills the process group of the own command `command` (SIGKILL); its
  // end goes to its `done` as it comes.
  virtual void stop_command(TaskId command) = 0;
  // Sends SIGKILL to those of `groups` (process groups on this host) that
  // still exist and are still the job's (see process_group.h), and says
  // which were killed and which were left alone.
  virtual void kill_leftovers(const std::vector<ProcessGroup>& groups,
                              std::function<void(const LeftoverCheck&)> done) = 0;
  // Copies the files that `patterns` (shell words, globs expanded by the
  // host's sh in the login directory, e.g. `results/*.json`) name on the
  // host into the local folder `into` (made if missing), keeping their
  // paths. A word with a `..` is refused on the host.
  virtual void get_files(const std::string& patterns, const std::string& into,
                         std::function<void(const FetchedFiles&)> done) = 0;
  // Copies `files` into the host's folder `to` (relative to the login
  // directory; made if missing), keeping their modes and times; only the
  // files it lacks or has with another size, time or mode are sent.
  virtual void put_files(const std::vector<PushFile>& files, const std::string& to,
                         std::function<void(const PutResult&)> done) = 0;
  // Stops what put_files does on the host now: each copy under way ends as
  // failed (a second interrupt stops a step's push as it stops jobs).
  virtual void stop_transfers() = 0;
  // Removes `paths` (relative to the login directory) from the host, each
  // by its exact name; `done` has the first removal that failed, or the
  // last.
  virtual void remove_files(const std::vector<std::string>& paths, CommandDone done) = 0;
  // What rank 0 of a job that spans hosts needs to know of its host, and
  // whether a service's `ready_port` listens: the local ports of its TCP
  // sockets (none where it cannot tell) and its addresses, or why they
  // could not be read.
  virtual void survey_network(std::function<void(Result<NetworkSurvey>)> done) = 0;
  // What `runner check --net` needs of the host: the tools it has to
  // listen and connect with, its interfaces and their addresses, and the
  // ports its TCP sockets hold; or why its shell could not tell.
  virtual void survey_interfaces(std::function<void(Result<HostSurvey>)> done) = 0;
  // Connects to every one of `targets` at once with `tool` (prober_tool
  // of the host's `tools`), each within `timeout_seconds` and once more
  // when its token did not come, and says what each answered.
  virtual void probe_connections(const std::string& tool, const std::vector<std::string>& tools,
                                 const std::vector<ProbeTarget>& targets, int timeout_seconds,
                                 std::function<void(const ConnectionProbes&)> done) = 0;
  // What each of the host's GPUs holds now (memory in use, compute
  // processes), for `gpu_free`. Returns the look's id, for stop_command
  // (a hung driver).
  virtual TaskId look_at_gpus(std::function<void(const GpuLookAnswer&)> done) = 0;
};

}  // namespace runner
