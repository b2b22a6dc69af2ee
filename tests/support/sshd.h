// A throwaway OpenSSH server on 127.0.0.1 for tests that need a real SSH
// host: its own config, host key and authorized client key in a test
// directory, on a free port. Several instances may share one client key, so
// a test can build a fleet of "hosts" (ports) reached with one identity.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace runner::testing {

// How to configure a test sshd.
struct SshdOptions {
  int max_sessions = 10;     // sshd's MaxSessions (channels per connection)
  std::string max_startups;  // sshd's MaxStartups, e.g. "2:100:2"; empty: default
  std::string extra_config;  // more sshd_config lines, appended verbatim
  // "NAME=value" pairs (no spaces) set in every session's environment.
  std::vector<std::string> session_environment;
  // Leave SHLVL unset, so that bash as the login shell sources ~/.bashrc as
  // it does under a real sshd (by default the machine's rc files stay out).
  bool source_bashrc = false;
  // An existing private key (with `<key>.pub` beside it) to authorize;
  // empty: generate `<dir>/client_ed25519`.
  std::string client_key;
  // sshd's LogLevel; log() returns what it wrote. DEBUG1 shows every
  // forwarded (direct-tcpip) channel, INFO every accepted login.
  std::string log_level = "ERROR";
  // Where sshd listens; port 0: a free port of that address.
  std::string listen_address = "127.0.0.1";
  int port = 0;
  // A command that runs sshd's command line and replaces itself with it
  // (keeping the pid), e.g. `ip netns exec NAME` for a host of its own.
  std::vector<std::string> launcher;
};

// One running sshd. Stops it (and every process it forked) when destroyed.
class Sshd {
 public:
  // Starts /usr/sbin/sshd -D -e on 127.0.0.1 on a free port (or where the
  // options say), with files in
  // `dir` (created if missing), and waits until it accepts connections.
  // Returns nullptr if no sshd binary exists; throws std::runtime_error with
  // sshd's log if it exists but does not start.
  static std::unique_ptr<Sshd> start(const std::string& dir, const SshdOptions& options = {});

  ~Sshd();
  Sshd(const Sshd&) = delete;
  Sshd& operator=(const Sshd&) = delete;

  int port() const { return m_port; }
  const std::string& address() const { return m_address; }
  // The user this sshd lets in: the current user.
  const std::string& user() const { return m_user; }
  // The private key this sshd accepts.
  const std::string& client_key() const { return m_client_key; }
  // The authorized_keys file; a test may append more public keys to it.
  const std::string& authorized_keys_file() const { return m_authorized_keys; }
  // "[127.0.0.1]:PORT ssh-ed25519 AAAA..." (no newline); on port 22 the
  // bare address, as ssh looks it up.
  std::string known_hosts_line() const;
  // What sshd wrote to stderr so far (for failure messages).
  std::string log() const;

  // Freezes (SIGSTOP) / thaws (SIGCONT) the per-connection sshd processes
  // and everything they started, keeping their sockets open: a peer that
  // stops answering.
  void pause_sessions();
  void resume_sessions();
  // Kills the per-connection sshd processes and everything they started,
  // leaving the listener up: every connection drops, new ones are accepted.
  void kill_sessions();

  // Kills sshd and its per-connection processes but not what the sessions
  // started: a host whose network went away while its jobs go on.
  void cut_network();
  // stop(), then the same sshd again on the same port with the same keys:
  // a host that reboots, or whose network comes back after cut_network().
  void restart();

  // Kills every process sshd forked (sessions and the jobs in them), then
  // stops sshd itself with SIGTERM and waits for it. Idempotent.
  void stop();

 private:
  Sshd() = default;
  // The processes below sshd's listener, and those its sessions left behind.
  std::vector<pid_t> descendants() const;
  // SIGSTOPs them all; returns every process stopped.
  std::set<pid_t> freeze();

  std::string m_dir;
  std::string m_user;
  std::string m_client_key;
  std::string m_authorized_keys;
  std::string m_host_key;
  std::string m_config_path;
  std::string m_log;
  std::string m_address;
  std::vector<std::string> m_launcher;
  int m_port = 0;
  pid_t m_pid = -1;
  std::set<pid_t> m_paused;
};

// Whether `pid` exists and is not a zombie (on this machine: the test
// sshd's "host" is this machine).
bool process_running(pid_t pid);
// The running (non-zombie) processes whose process group is `pgid`.
std::vector<pid_t> running_group_members(pid_t pgid);

// True when the environment says this is CI (CI=true), where a missing sshd
// is a failure rather than a reason to skip.
bool sshd_required();

}  // namespace runner::testing

// In a test body, after `auto sshd = Sshd::start(...)`: skips the test when
// there is no sshd on this machine, but fails it when CI=true.
#define RUNNER_REQUIRE_SSHD(ptr)                                                         \
  do {                                                                                   \
    if (!(ptr)) {                                                                        \
      if (::runner::testing::sshd_required()) {                                          \
        FAIL() << "no /usr/sbin/sshd, and CI=true requires it (install openssh-server)"; \
      }                                                                                  \
      GTEST_SKIP() << "no /usr/sbin/sshd on this machine";                               \
    }                                                                                    \
  } while (false)
