// Setting up an SSH connection: a turn at the server's handshake limit,
// TCP (or a jump host's tunnel, or a ProxyCommand), the handshake (retried
// when sshd drops it before the banner, as beyond MaxStartups), the host
// key, and authentication. Kept apart from the channels because none of it
// runs once the connection is ready. Threading: none.
#include "ssh_connector.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runner/core/debug_log.h"
#include "runner/exec/shell.h"
#include "ssh_context.h"
#include "ssh_jump.h"

namespace runner::ssh {

namespace {

constexpr int k_max_handshake_attempts = 5;
constexpr auto k_first_backoff = std::chrono::milliseconds(50);
constexpr auto k_max_backoff = std::chrono::milliseconds(1000);
// How often a connection waiting for its turn at the handshake limit looks again.
constexpr auto k_gate_poll = std::chrono::milliseconds(10);

// Whether the server's first bytes hold an SSH identification line.
bool has_ssh_banner(const std::string& first_bytes) {
  return first_bytes.rfind("SSH-", 0) == 0 || first_bytes.find("\nSSH-") != std::string::npos;
}

// The first line the server sent, printable, for messages.
std::string first_line(const std::string& first_bytes) {
  std::string line = first_bytes.substr(0, first_bytes.find_first_of("\r\n"));
  for (char& c : line) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return line;
}

std::string host_part(const std::string& address_text) {
  if (!address_text.empty() && address_text[0] == '[') {
    return address_text.substr(1, address_text.find(']') - 1);
  }
  return address_text.substr(0, address_text.rfind(':'));
}

}  // namespace

SshConnector::SshConnector(const HostTarget& target, HostHints& hints, JumpLink* via,
                           InboundTrace& inbound)
    : m_target(target),
      m_hints(hints),
      m_via(via),
      m_inbound(inbound),
      m_display(target.port == 22 ? target.name : fmt::format("{}:{}", target.name, target.port)),
      m_random(std::random_device{}()) {
  if (m_via) {
    m_display = fmt::format("{} (via {})", target.name, m_via->route_name());
  } else if (!target.proxy_command.empty()) {
    m_display = target.name + " (via ProxyCommand)";
  }
  m_inbound.over_tcp = connects_over_tcp();
}

SshConnector::~SshConnector() { drop_transport(); }

ReadySession SshConnector::take_session() {
  ReadySession ready;
  ready.fd = std::exchange(m_fd, -1);
  ready.session = std::exchange(m_session, nullptr);
  ready.proxy = std::move(m_proxy);
  ready.display = m_display;
  ready.auth_method = std::move(m_auth_method);
  ready.host_key_status = std::move(m_host_key_status);
  return ready;
}

void SshConnector::start(Clock::time_point now) {
  m_now = now;
  debug_log::step("{}: connecting as {} to {} port {}{}{}", m_target.name, m_target.user,
                  m_target.hostname, m_target.port,
                  m_via ? " through its jump host " + m_via->route_name() : std::string(),
                  m_target.proxy_command.empty() ? std::string()
                                                 : " with ProxyCommand " + m_target.proxy_command);
  if (m_via) {
    m_gate_key = fmt::format("{} via {}:{}", m_via->route_name(), m_target.hostname, m_target.port);
  } else if (!m_target.proxy_command.empty()) {
    m_gate_key = "ProxyCommand " + m_target.proxy_command;
  } else {
    Result<std::vector<SocketAddress>> addresses = resolve_host(m_target.hostname, m_target.port);
    if (!addresses) {
      std::string name = m_target.hostname == m_target.name
                             ? m_target.name
                             : fmt::format("{} (HostName {})", m_target.name, m_target.hostname);
      fail(ErrorKind::connect,
           fmt::format("{}: cannot resolve the host name: {}", name, addresses.status().message()));
      return;
    }
    m_addresses = std::move(*addresses);
    m_gate_key = m_addresses.front().text;
  }
  m_phase = Phase::gate;
  if (enter_gate()) begin_transport();
}

bool SshConnector::enter_gate() {
  if (m_in_gate) return true;
  if (m_target.context && !m_target.context->enter_handshake(m_gate_key)) return false;
  m_in_gate = true;
  return true;
}

void SshConnector::leave_gate() {
  if (!m_in_gate) return;
  m_in_gate = false;
  if (m_target.context) m_target.context->leave_handshake(m_gate_key);
}

void SshConnector::begin_transport() {
  if (m_first_attempt == Clock::time_point{}) m_first_attempt = m_now;
  m_inbound.reset();
  if (m_via) {
    m_tunnel = m_via->open_tunnel(m_target.hostname, m_target.port, m_now);
    set_attempt_deadline();
    m_phase = Phase::tunnel;
    return;
  }
  if (!m_target.proxy_command.empty()) {
    Result<std::unique_ptr<ProxyCommand>> proxy = ProxyCommand::start(m_target.proxy_command);
    if (!proxy) {
      fail(ErrorKind::connect, fmt::format("{}: cannot start its ProxyCommand ({}): {}", m_display,
                                           m_target.proxy_command, proxy.status().message()));
      return;
    }
    m_proxy = std::move(*proxy);
    m_fd = m_proxy->take_fd();
    set_attempt_deadline();
    begin_handshake();
    return;
  }
  m_address_index = 0;
  m_connect_errors.clear();
  connect_next_address();
}

void SshConnector::connect_next_address() {
  while (m_address_index < m_addresses.size()) {
    const SocketAddress& address = m_addresses[m_address_index];
    m_display = host_part(address.text) == m_target.name
                    ? address.text
                    : fmt::format("{} ({})", m_target.name, address.text);
    bool in_progress = false;
    int error_number = 0;
    debug_log::detail("{}: TCP connect to {}", m_target.name, address.text);
    int fd = start_tcp_connect(address, in_progress, error_number);
    if (fd < 0) {
      debug_log::step("{}: TCP connect to {} failed: {}", m_target.name, address.text,
                      lowercase_first(std::strerror(error_number)));
      m_connect_errors += fmt::format("{}{}: {}", m_connect_errors.empty() ? "" : "; ",
                                      address.text, lowercase_first(std::strerror(error_number)));
      ++m_address_index;
      continue;
    }
    m_fd = fd;
    set_attempt_deadline();
    m_inbound.reset();
    if (in_progress) {
      m_phase = Phase::tcp_connect;
    } else {
      begin_handshake();
    }
    return;
  }
  if (m_addresses.size() == 1) {
    fail(ErrorKind::connect, fmt::format("{}: {}", m_display,
                                         m_connect_errors.substr(m_connect_errors.find(": ") + 2)));
  } else {
    fail(ErrorKind::connect,
         fmt::format("{}: cannot connect ({})", m_target.name, m_connect_errors));
  }
}

void SshConnector::begin_handshake() {
  initialize_libssh2();
  m_session = libssh2_session_init_ex(nullptr, nullptr, nullptr, &m_inbound);
  if (!m_session) {
    fail(ErrorKind::protocol, fmt::format("{}: cannot create an SSH session", m_display));
    return;
  }
  libssh2_session_callback_set(m_session, LIBSSH2_CALLBACK_RECV,
                               reinterpret_cast<void*>(&InboundTrace::receive_hook));
  libssh2_session_set_blocking(m_session, 0);
  if (m_target.compression) libssh2_session_flag(m_session, LIBSSH2_FLAG_COMPRESS, 1);
  std::string methods = host_key_method_preference(m_session, host_key_policy());
  if (!methods.empty()) {
    libssh2_session_method_pref(m_session, LIBSSH2_METHOD_HOSTKEY, methods.c_str());
  }
  ++m_handshake_attempt;
  debug_log::detail("{}: SSH handshake, attempt {}", m_display, m_handshake_attempt);
  m_phase = Phase::handshake;
}

void SshConnector::set_attempt_deadline() {
  m_attempt_deadline = m_now + m_target.options.connect_timeout;
  m_prompted_before = m_target.context ? m_target.context->time_in_prompts() : Clock::duration{};
}

Clock::time_point SshConnector::attempt_deadline() const {
  // Time spent waiting for someone to type a passphrase does not count.
  if (!m_target.context) return m_attempt_deadline;
  return m_attempt_deadline + (m_target.context->time_in_prompts() - m_prompted_before);
}

HostKeyPolicy SshConnector::host_key_policy() const {
  HostKeyPolicy policy;
  policy.files = m_target.known_hosts_files;
  if (policy.files.empty()) policy.files.push_back(m_target.options.known_hosts);
  policy.host = m_target.known_hosts_host.empty() ? m_target.hostname : m_target.known_hosts_host;
  if (policy.host.empty()) policy.host = m_target.name;
  policy.port = m_target.host_key_alias ? 22 : m_target.port;
  policy.checking = m_target.host_key_checking;
  policy.display = m_display;
  if (!connects_over_tcp() || m_target.host_key_alias) {
    // ssh-keyscan cannot go through a jump host or a ProxyCommand (nor knows
    // HostKeyAlias): let ssh itself record the key.
    std::string config = m_target.options.config_file.empty()
                             ? std::string()
                             : " -F " + shell_word(m_target.options.config_file);
    policy.record_command = fmt::format(
        "ssh{} -o StrictHostKeyChecking=accept-new -o UserKnownHostsFile={} -p {} -l {} {} true",
        config, shell_word(policy.files.front()), m_target.port, shell_word(m_target.user),
        shell_word(m_target.name));
  }
  return policy;
}

Clock::time_point SshConnector::deadline() const {
  if (m_phase == Phase::gate) return m_now + k_gate_poll;
  if (m_phase == Phase::backoff) return m_backoff_until;
  return attempt_deadline();
}

void SshConnector::poll_fds(std::vector<pollfd>& out) const {
  if (m_fd < 0 || m_phase == Phase::backoff || m_phase == Phase::failed) return;
  short events = POLLOUT;
  if (m_phase != Phase::tcp_connect) {
    events = POLLIN;
    if (m_session &&
        (libssh2_session_block_directions(m_session) & LIBSSH2_SESSION_BLOCK_OUTBOUND)) {
      events |= POLLOUT;
    }
  }
  out.push_back(pollfd{m_fd, events, 0});
}

bool SshConnector::step(Clock::time_point now) {
  m_now = now;
  m_progressed = false;
  if (m_phase == Phase::backoff) {
    if (now < m_backoff_until) return m_progressed;
    m_phase = Phase::gate;
  }
  if (m_phase == Phase::gate) {
    if (!enter_gate()) return m_progressed;
    m_progressed = true;
    begin_transport();
    if (m_phase == Phase::failed) return m_progressed;
  }
  if (now >= attempt_deadline()) {
    const char* doing = m_phase == Phase::tcp_connect ? "connecting"
                        : m_phase == Phase::tunnel    ? "waiting for the jump host's tunnel"
                        : m_phase == Phase::handshake ? "waiting for the SSH handshake"
                                                      : "authenticating";
    fail(ErrorKind::timeout,
         fmt::format("{}: timed out after {} while {}", m_display,
                     describe_duration(m_target.options.connect_timeout), doing));
    return m_progressed;
  }
  // Each phase that ends goes on to the next at once.
  if (m_phase == Phase::tunnel && !step_tunnel()) return m_progressed;
  if (m_phase == Phase::tcp_connect && !step_tcp_connect()) return m_progressed;
  if (m_phase == Phase::handshake && !step_handshake(now)) return m_progressed;
  if (m_phase == Phase::authenticate) step_authenticate();
  return m_progressed;
}

bool SshConnector::step_tunnel() {
  if (m_tunnel->state == Tunnel::State::waiting) return false;
  m_progressed = true;
  if (m_tunnel->state == Tunnel::State::failed) {
    fail(m_tunnel->error.kind(), fmt::format("{}: cannot reach it through its jump host: {}",
                                             m_display, m_tunnel->error.message()));
    return false;
  }
  m_fd = m_tunnel->take_fd();
  m_tunnel.reset();
  begin_handshake();
  return m_phase != Phase::failed;
}

bool SshConnector::step_tcp_connect() {
  int result = tcp_connect_result(m_fd);
  if (result < 0) return false;
  if (result > 0) {
    debug_log::step("{}: TCP connect to {} failed: {}", m_target.name,
                    m_addresses[m_address_index].text, lowercase_first(std::strerror(result)));
    m_connect_errors +=
        fmt::format("{}{}: {}", m_connect_errors.empty() ? "" : "; ",
                    m_addresses[m_address_index].text, lowercase_first(std::strerror(result)));
    ::close(m_fd);
    m_fd = -1;
    ++m_address_index;
    connect_next_address();
    return false;
  }
  m_progressed = true;
  begin_handshake();
  return m_phase != Phase::failed;
}

bool SshConnector::step_handshake(Clock::time_point now) {
  int rc = libssh2_session_handshake(m_session, m_fd);
  if (rc == LIBSSH2_ERROR_EAGAIN) return false;
  m_progressed = true;
  if (rc != 0) {
    handshake_failed(now);
    return false;
  }
  debug_log::step("{}: SSH handshake done ({})", m_display,
                  libssh2_session_banner_get(m_session) ? libssh2_session_banner_get(m_session)
                                                        : "no banner");
  Result<std::string> host_key = verify_host_key(m_session, host_key_policy());
  if (!host_key) {
    fail(host_key.status().kind(), host_key.status().message());
    return false;
  }
  m_host_key_status = std::move(*host_key);
  debug_log::step("{}: host key accepted", m_display);
  m_auth = std::make_unique<Authenticator>(m_session, auth_settings());
  m_phase = Phase::authenticate;
  return true;
}

void SshConnector::handshake_failed(Clock::time_point now) {
  bool banner_seen = has_ssh_banner(m_inbound.first_bytes);
  // sshd says so when it drops a handshake beyond MaxStartups: then keep
  // trying for as long as a connection may take. Any other close before
  // the banner is retried a few times.
  bool max_startups = m_inbound.first_bytes.find("MaxStartups") != std::string::npos;
  bool retry = max_startups ? now - m_first_attempt < m_target.options.connect_timeout
                            : m_handshake_attempt < k_max_handshake_attempts;
  if (!banner_seen && retry) {
    // Allow fewer at once, and try again shortly, at a jittered time so
    // that a burst spreads out.
    if (m_target.context) m_target.context->handshake_refused(m_gate_key);
    drop_transport();
    std::uniform_real_distribution<double> jitter(0.5, 1.5);
    auto backoff = std::min<Clock::duration>(
        k_first_backoff * (1 << std::min(m_handshake_attempt - 1, 10)), k_max_backoff);
    m_backoff_until = now + std::chrono::duration_cast<Clock::duration>(backoff * jitter(m_random));
    debug_log::step(
        "{}: the server closed the connection before the SSH handshake{}; trying "
        "again in {} ms",
        m_display, max_startups ? " (MaxStartups)" : "",
        std::chrono::duration_cast<std::chrono::milliseconds>(m_backoff_until - now).count());
    m_phase = Phase::backoff;
    return;
  }
  if (!banner_seen && !m_target.proxy_command.empty()) {
    fail(ErrorKind::connect,
         fmt::format("{}: its ProxyCommand ({}) ended before the SSH handshake, {} times; "
                     "run it by hand to see why",
                     m_display, m_target.proxy_command, m_handshake_attempt));
  } else if (!banner_seen) {
    std::string said = m_inbound.first_bytes.empty()
                           ? std::string()
                           : fmt::format(" (it said \"{}\")", first_line(m_inbound.first_bytes));
    fail(ErrorKind::connect,
         fmt::format("{}: the server closed the connection before the SSH handshake{}, "
                     "{} times; is it an SSH server? sshd's MaxStartups may be refusing "
                     "this many connections at once",
                     m_display, said, m_handshake_attempt));
  } else {
    fail(ErrorKind::protocol,
         fmt::format("{}: SSH handshake failed: {}", m_display, last_error(m_session)));
  }
}

AuthSettings SshConnector::auth_settings() const {
  AuthSettings settings;
  settings.user = m_target.user;
  settings.host = m_target.name;
  settings.display = m_display;
  settings.use_agent = m_target.options.use_agent;
  settings.agent_socket = m_target.options.agent_socket;
  settings.identity_files = m_target.options.identity_files;
  settings.identity_files_explicit = m_target.identity_files_explicit;
  settings.identities_only = m_target.identities_only;
  settings.preferred = m_hints.working_identity;
  if (SshContext* context = m_target.context;
      context && !m_target.batch_mode && context->can_ask_passphrase()) {
    settings.passphrase = [context](const std::string& key) { return context->passphrase(key); };
    settings.passphrase_failed = [context](const std::string& key, const std::string& phrase) {
      context->passphrase_failed(key, phrase);
    };
  }
  return settings;
}

void SshConnector::step_authenticate() {
  Authenticator::Progress progress = m_auth->step();
  if (progress == Authenticator::Progress::pending) return;
  m_progressed = true;
  if (progress == Authenticator::Progress::failed) {
    fail(m_auth->error().kind(), m_auth->error().message());
    return;
  }
  m_hints.working_identity = m_auth->identity();
  m_auth_method = m_auth->method();
  debug_log::step("{}: authenticated as {} with {}", m_display, m_target.user, m_auth_method);
  m_auth.reset();
  leave_gate();
  libssh2_keepalive_config(m_session, 1, 1);
  m_phase = Phase::ready;
}

void SshConnector::fail(ErrorKind kind, const std::string& message) {
  leave_gate();
  m_error = {kind, message};
  m_phase = Phase::failed;
}

void SshConnector::drop_transport() {
  leave_gate();
  m_tunnel.reset();
  m_auth.reset();
  free_session(m_session, m_fd);
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
  m_proxy.reset();
}

}  // namespace runner::ssh
