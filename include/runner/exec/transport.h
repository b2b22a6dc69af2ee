// The boundary between scheduling and I/O. A HostTransport runs jobs on one
// host (over SSH, or as local processes); the scheduler only ever talks to
// this interface, and unit tests substitute a scripted fake.
//
// Threading: none. Transports are passive: the event loop asks for their
// file descriptors and deadline, polls, and calls step(); every event is
// delivered to TransportEvents from inside step() (or connect()).
#pragma once

#include <chrono>
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

// One host: its connection(s) and the jobs running there.
class HostTransport : public Pollable {
 public:
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
};

}  // namespace runner
