// Private to the SSH executor: what its pieces (connection, pool, host-key
// check, authentication) share, and small libssh2 helpers.
// Threading: none; every object belongs to the event loop's thread.
#pragma once

#include <libssh2.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/exec/executor.h"
#include "runner/exec/ssh/ssh_config.h"
#include "runner/exec/ssh/ssh_executor.h"

namespace runner {
class SshContext;
}

namespace runner::ssh {

// One host (or jump host) as every connection to it sees it: the ssh
// configuration applied, the command line's overrides on top.
struct HostTarget {
  int host = 0;
  std::string name;      // as the user wrote it: hosts.yaml, or a ProxyJump hop
  std::string hostname;  // what is connected to (HostName)
  std::string user;      // login user
  int port = 22;
  // The name known_hosts records (HostKeyAlias, else hostname); with
  // HostKeyAlias it is recorded without the port, as OpenSSH does.
  std::string known_hosts_host;
  bool host_key_alias = false;
  // Checked in order; new keys are added to the first.
  std::vector<std::string> known_hosts_files;
  HostKeyChecking host_key_checking = HostKeyChecking::ask;
  bool identities_only = false;
  bool identity_files_explicit = false;  // missing key files are worth a note
  bool batch_mode = false;               // never ask for a passphrase
  bool compression = false;              // offer zlib compression
  // ProxyJump hops, nearest first, each resolved; their own `jumps` are empty.
  std::vector<HostTarget> jumps;
  // Without jumps: the ProxyCommand that reaches the host (tokens expanded);
  // empty: a TCP connection.
  std::string proxy_command;
  SshOptions options;  // identity_files, agent and timeouts resolved
  SshContext* context = nullptr;
};

// One direct-tcpip channel of a jump host's connection, bridged to a
// socketpair; the connection to the next host uses the other end as its socket.
struct Tunnel {
  enum class State { waiting, open, failed };
  std::string host;
  int port = 0;
  State state = State::waiting;
  int fd = -1;  // the next host's end, until its connection takes it
  Status error;
  Tunnel() = default;
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;
  ~Tunnel();
  // Hands the socket over (the caller closes it).
  int take_fd();
};

// What all connections to one host learn and share.
struct HostHints {
  // Channels sshd allows per connection (MaxSessions), once a refusal taught it.
  std::optional<int> channel_limit;
  // The identity that authenticated a connection to this host, tried first next time.
  std::string working_identity;
  // The host cannot run launchers (no `setsid`): one channel per job.
  bool no_launcher = false;
};

// Work that needs a channel: a job, a signal to a job's process group, a
// channel opened and dropped only to make libssh2 read an idle session, or
// a tunnel to the next host behind a jump host.
struct ChannelWork {
  enum class Kind { job, signal, pump, tunnel };
  Kind kind = Kind::job;
  TaskId job = 0;
  std::string command;           // job: the user's command
  std::string input;             // job: a local file sent as its stdin (none: empty)
  std::string mark;              // job: its processes' mark (process_group.h)
  long pgid = 0;                 // signal: the target group
  int signal = 0;                // signal: the signal number
  std::weak_ptr<Tunnel> tunnel;  // tunnel: gone when the next host gave up
};

// Where a connection reports what its tasks do (the SSH executor).
class TaskSink {
 public:
  virtual ~TaskSink() = default;
  virtual void task_started(TaskId job, long pgid) = 0;
  virtual void task_output(TaskId job, OutputStream stream, std::string_view bytes) = 0;
  virtual void task_exited(TaskId job, const JobExit& exit) = 0;
  // `signal` may not have reached the job's process group: `why`.
  virtual void signal_failed(TaskId job, int signal, const std::string& why) = 0;
};

// Calls libssh2_init once per process.
void initialize_libssh2();

// Frees `session` (and the channels it holds) at once, shutting `fd`, its
// socket, down first so that no send can return EAGAIN; leaves it null.
void free_session(LIBSSH2_SESSION*& session, int fd);

// libssh2's text for its last error on `session`, or a generic phrase.
std::string last_error(LIBSSH2_SESSION* session);

// True for libssh2 errors after which the session cannot be used.
bool is_session_error(int rc);

std::string base64_encode(std::string_view bytes);
// Decodes standard base64, skipping whitespace; nullopt on a bad character.
std::optional<std::string> base64_decode(std::string_view text);

// `text` as a shell word for a command shown to the user: as it is when
// that is safe, single-quoted otherwise.
std::string shell_word(std::string_view text);

// How much of what a remote shell said is kept for a message.
constexpr size_t k_kept_words = 1024;

// The last `limit` bytes of `text`.
std::string keep_tail(std::string text, size_t limit);

// The last line of `text` that holds something, with unprintable bytes as '?'.
std::string last_line(std::string_view text);

// `text` with its first letter in lower case, to quote strerror mid-sentence.
std::string lowercase_first(std::string text);

// "10 s", "1.5 s", "200 ms"
std::string describe_duration(std::chrono::milliseconds duration);

}  // namespace runner::ssh
