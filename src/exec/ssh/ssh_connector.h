// Private to the SSH executor: setting up one SSH connection, up to a ready
// session. A passive state machine: a turn at the server's handshake limit,
// TCP connect (or a tunnel through a jump host, or a ProxyCommand), the
// handshake (retried after a backoff when sshd drops it before the banner,
// as beyond MaxStartups), the host-key check, then authentication. Its
// connection owns it while connecting and then takes the session from it.
// Threading: none; its connection steps it from the event loop.
#pragma once

#include <poll.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ssh_auth.h"
#include "ssh_common.h"
#include "ssh_inbound.h"
#include "ssh_known_hosts.h"
#include "ssh_proxy_command.h"
#include "ssh_socket.h"

namespace runner::ssh {

class JumpLink;

// A session set up and authenticated, and what it runs over.
struct ReadySession {
  int fd = -1;
  LIBSSH2_SESSION* session = nullptr;
  std::unique_ptr<ProxyCommand> proxy;  // the ProxyCommand behind fd, if any
  std::string display;                  // "node03 (127.0.0.1:2222)"
  std::string auth_method;
  std::string host_key_status;
};

class SshConnector {
 public:
  // `via`: the jump host to reach the target through (ProxyJump); null: TCP
  // or the target's ProxyCommand. `inbound`: the session's receive hook
  // reports there; it outlives the session.
  SshConnector(const HostTarget& target, HostHints& hints, JumpLink* via, InboundTrace& inbound);
  // Gives up: leaves the handshake limit, drops the session and its socket.
  ~SshConnector();
  SshConnector(const SshConnector&) = delete;
  SshConnector& operator=(const SshConnector&) = delete;

  // Resolves the host and starts the TCP connect; may fail at once.
  void start(Clock::time_point now);
  // True when it did something.
  bool step(Clock::time_point now);
  void poll_fds(std::vector<pollfd>& out) const;
  Clock::time_point deadline() const;

  bool ready() const { return m_phase == Phase::ready; }
  bool failed() const { return m_phase == Phase::failed; }
  const Status& error() const { return m_error; }
  // "node03 (127.0.0.1:2222)": the address it connects to, once known.
  const std::string& display() const { return m_display; }
  // Once ready: the session, which the connector no longer holds.
  ReadySession take_session();

 private:
  enum class Phase {
    gate,  // waiting for a turn at the server's handshake limit
    tcp_connect,
    tunnel,  // waiting for the jump host to open the tunnel
    handshake,
    backoff,
    authenticate,
    ready,
    failed
  };

  bool enter_gate();
  void leave_gate();
  void begin_transport();
  void connect_next_address();
  void begin_handshake();
  HostKeyPolicy host_key_policy() const;
  void set_attempt_deadline();
  Clock::time_point attempt_deadline() const;
  // One phase each; true when it ended and the next begins.
  bool step_tunnel();
  bool step_tcp_connect();
  bool step_handshake(Clock::time_point now);
  // Gives up, or tries again after a backoff (sshd's MaxStartups).
  void handshake_failed(Clock::time_point now);
  AuthSettings auth_settings() const;
  void step_authenticate();
  // Whether m_fd is a TCP socket (not a tunnel's or a ProxyCommand's socketpair).
  bool connects_over_tcp() const { return !m_via && m_target.proxy_command.empty(); }
  void fail(ErrorKind kind, const std::string& message);
  // Leaves the gate and drops the session, the socket and what is behind it.
  void drop_transport();

  const HostTarget& m_target;
  HostHints& m_hints;
  JumpLink* m_via;
  InboundTrace& m_inbound;
  Phase m_phase = Phase::tcp_connect;
  Status m_error;
  std::string m_display;
  bool m_progressed = false;  // the last step did something
  Clock::time_point m_now{};

  std::shared_ptr<Tunnel> m_tunnel;       // until its socket is taken
  std::unique_ptr<ProxyCommand> m_proxy;  // the ProxyCommand behind m_fd, if any
  std::string m_gate_key;                 // the server, for the handshake limit
  bool m_in_gate = false;
  std::vector<SocketAddress> m_addresses;
  size_t m_address_index = 0;
  std::string m_connect_errors;
  int m_fd = -1;
  LIBSSH2_SESSION* m_session = nullptr;
  std::unique_ptr<Authenticator> m_auth;
  std::string m_auth_method;
  std::string m_host_key_status;
  int m_handshake_attempt = 0;
  Clock::time_point m_first_attempt{};  // of this connection, for MaxStartups retries
  Clock::time_point m_attempt_deadline{};
  Clock::duration m_prompted_before{};  // the context's time in prompts then
  Clock::time_point m_backoff_until{};
  std::minstd_rand m_random;
};

}  // namespace runner::ssh
