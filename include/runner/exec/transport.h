// The boundary between scheduling and I/O. A HostTransport runs jobs on one
// host (over SSH, or as local processes); the scheduler only ever talks to
// this interface, and unit tests substitute a scripted fake.
//
// Threading: none. Transports are passive: the event loop asks for their
// file descriptors and deadline, polls, and calls step(); every event is
// delivered to TransportEvents from inside step() (or connect()).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/job_exit.h"
#include "runner/core/pollable.h"

namespace runner {

// How much of one output stream of a job a transport reads in one step, so
// that a job writing as fast as it can leaves the event loop to the others.
inline constexpr std::size_t k_output_share = 256 * 1024;

enum class TransportErrorKind { connect, host_key, auth, protocol, timeout, disconnected };

// Why a host cannot be used. The message names the host, the step and,
// where there is one, the fix.
struct TransportError {
  TransportErrorKind kind = TransportErrorKind::connect;
  std::string message;
};

// Receives what transports observe.
class TransportEvents {
 public:
  virtual ~TransportEvents() = default;
  virtual void host_ready(int host) = 0;
  // The host is unusable. Every job it was running gets job_exited with
  // lost = true before this is called.
  virtual void host_failed(int host, const TransportError& error) = 0;
  // The job's process group exists; pgid is its id on the host.
  virtual void job_started(JobId job, long pgid) = 0;
  virtual void job_output(JobId job, OutputStream stream, std::string_view bytes) = 0;
  virtual void job_exited(JobId job, const JobExit& exit) = 0;
  // `signal` (from signal_job) may not have reached the job's process
  // group: the host's shell could not run `kill`, or it failed. `why` names
  // the host and the cause.
  virtual void signal_failed(JobId job, int signal, const std::string& why) = 0;
};

// What became of the process groups that lost or dead jobs left on a host,
// once the runner looked for them (HostTransport::kill_leftovers).
struct LeftoverCheck {
  std::vector<long> killed;  // groups that still existed, now sent SIGKILL
  std::string error;         // non-empty: the host could not be asked, or
                             // its shell failed (what it said)
  bool lost = false;         // the host was lost before it answered
};

// Ids of the runner's own commands on a host (HostTransport::run_command);
// job ids stay far below.
inline constexpr JobId k_first_own_command_id = JobId{1} << 62;

// One host: its connection(s) and the jobs running there. Implementations
// (SSH, local processes) start jobs and signal them; the typed operations
// the scheduler also needs (the runner's own commands, killing leftovers)
// are built here on top, so the scheduler never writes shell.
class HostTransport : public Pollable {
 public:
  HostTransport(int host, TransportEvents& events) : m_host(host), m_events(events) {}

  // Starts connecting. Reports host_ready or host_failed (possibly at once).
  virtual void connect() = 0;
  // Runs `command` exactly as `sh -c '<command>'` would, in its own process
  // group, stdin empty. Only called after host_ready. Reports job_started,
  // job_output..., job_exited.
  virtual void start_job(JobId job, const std::string& command) = 0;
  // Sends `signal` (SIGTERM, SIGKILL, ...) to the job's whole process group.
  virtual void signal_job(JobId job, int signal) = 0;
  // Closes connections once no job runs. idle() is true when done.
  virtual void shutdown() = 0;
  virtual bool idle() const = 0;

  // The runner's own command (a job's `cancel:` command), run as start_job
  // runs a job; its end and its first 64 KiB of output go to `done`, not to
  // the events. Only after host_ready; `done` runs with lost = true if the
  // host fails first.
  using CommandDone = std::function<void(const JobExit& exit, const std::string& output)>;
  void run_command(const std::string& command, CommandDone done);
  // Sends SIGKILL to those of `groups` (process group ids on this host)
  // that still exist, and says which did.
  void kill_leftovers(const std::vector<long>& groups, std::function<void(const LeftoverCheck&)> done);

 protected:
  int host() const { return m_host; }
  // What implementations report. Ends and output of the runner's own
  // commands are taken here; the rest goes to the events.
  void report_ready() { m_events.host_ready(m_host); }
  void report_failed(const TransportError& error);
  void report_started(JobId job, long pgid);
  void report_output(JobId job, OutputStream stream, std::string_view bytes);
  void report_exited(JobId job, const JobExit& exit);
  void report_signal_failed(JobId job, int signal, const std::string& why);

 private:
  struct OwnCommand {
    CommandDone done;
    std::string output;
  };

  int m_host;
  TransportEvents& m_events;
  JobId m_next_own_id = k_first_own_command_id;
  std::map<JobId, OwnCommand> m_own;
};

}  // namespace runner
