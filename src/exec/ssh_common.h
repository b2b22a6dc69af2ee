// Private to the SSH transport: what its pieces (connection, pool, host-key
// check, authentication) share, and small libssh2 helpers.
// Threading: none; every object belongs to the event loop's thread.
#pragma once

#include <libssh2.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "runner/exec/ssh_transport.h"
#include "runner/exec/transport.h"

namespace runner::ssh {

// One host as every connection to it sees it, defaults filled in.
struct HostTarget {
  int host = 0;
  std::string name;  // HostAddress::host, as the user wrote it
  std::string user;  // login user
  int port = 22;
  SshOptions options;  // identity_files and known_hosts resolved
};

// What all connections to one host learn and share.
struct HostHints {
  // Channels sshd allows per connection (MaxSessions), once a refusal taught it.
  std::optional<int> channel_limit;
  // The identity that authenticated a connection to this host, tried first next time.
  std::string working_identity;
};

// Work that needs a channel: a job, a signal to a job's process group, or a
// channel opened and dropped only to make libssh2 read an idle session.
struct ChannelWork {
  enum class Kind { job, signal, pump };
  Kind kind = Kind::job;
  JobId job = 0;
  std::string command;  // job: the user's command
  long pgid = 0;        // signal: the target group
  int signal = 0;       // signal: the signal number
};

// Where a connection reports what its jobs do.
class JobSink {
 public:
  virtual ~JobSink() = default;
  virtual void job_started(JobId job, long pgid) = 0;
  virtual void job_output(JobId job, OutputStream stream, std::string_view bytes) = 0;
  virtual void job_exited(JobId job, const JobExit& exit) = 0;
};

// Calls libssh2_init once per process.
void initialize_libssh2();

// libssh2's text for its last error on `session`, or a generic phrase.
std::string last_error(LIBSSH2_SESSION* session);

// True for libssh2 errors after which the session cannot be used.
bool is_session_error(int rc);

std::string base64_encode(std::string_view bytes);
// Decodes standard base64, skipping whitespace; nullopt on a bad character.
std::optional<std::string> base64_decode(std::string_view text);

// "10 s", "1.5 s", "200 ms"
std::string describe_duration(std::chrono::milliseconds duration);

}  // namespace runner::ssh
