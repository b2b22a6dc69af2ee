// One SSH connection: its set-up state machine and its channels. Every
// libssh2 call is non-blocking; after LIBSSH2_ERROR_EAGAIN the same call is
// repeated with the same arguments on a later step. Threading: none.
#include "ssh_connection.h"

#include <fmt/format.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "runner/exec/shell.h"
#include "ssh_context.h"
#include "ssh_jump.h"
#include "ssh_known_hosts.h"

namespace runner::ssh {

namespace {

constexpr int k_max_handshake_attempts = 5;
constexpr auto k_first_backoff = std::chrono::milliseconds(50);
constexpr auto k_max_backoff = std::chrono::milliseconds(1000);
constexpr auto k_refusal_pause = std::chrono::milliseconds(20);
// sshd frees a session slot only after a loop iteration that follows our
// channel close; an open that arrives with the close may still be refused.
constexpr auto k_close_settling = std::chrono::milliseconds(200);
constexpr auto k_disconnect_grace = std::chrono::seconds(2);
// Output before the wrapper's "runner-pgid" line (login-shell noise) is
// passed on line by line; past this much without it, stop looking.
constexpr size_t k_max_head = 64 * 1024;
constexpr size_t k_first_bytes_kept = 512;
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

std::string lowercase_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

std::string host_part(const std::string& address_text) {
  if (!address_text.empty() && address_text[0] == '[') {
    return address_text.substr(1, address_text.find(']') - 1);
  }
  return address_text.substr(0, address_text.rfind(':'));
}

JobExit not_started(const std::string& why, int signal) {
  JobExit exit;
  exit.signal = signal_name(signal);
  exit.error = why;
  return exit;
}

}  // namespace

SshConnection::Channel::~Channel() {
  if (bridge_fd >= 0) ::close(bridge_fd);
}

SshConnection::SshConnection(const HostTarget& target, HostHints& hints, JobSink& sink,
                             std::shared_ptr<JumpLink> via)
    : m_target(target),
      m_hints(hints),
      m_sink(sink),
      m_via(std::move(via)),
      m_display(target.port == 22 ? target.name : fmt::format("{}:{}", target.name, target.port)),
      m_random(std::random_device{}()),
      m_limit(hints.channel_limit) {
  if (m_via) {
    m_display = fmt::format("{} (via {})", target.name, m_via->route_name());
  } else if (!target.proxy_command.empty()) {
    m_display = target.name + " (via ProxyCommand)";
  }
}

SshConnection::~SshConnection() { destroy_session(); }

// ---------------------------------------------------------------------------
// Setting up

void SshConnection::start(Clock::time_point now) {
  m_now = now;
  if (m_via) {
    m_gate_key = fmt::format("{} via {}:{}", m_via->route_name(), m_target.hostname, m_target.port);
  } else if (!m_target.proxy_command.empty()) {
    m_gate_key = "ProxyCommand " + m_target.proxy_command;
  } else {
    std::string error;
    m_addresses = resolve_host(m_target.hostname, m_target.port, error);
    if (m_addresses.empty()) {
      std::string name = m_target.hostname == m_target.name
                             ? m_target.name
                             : fmt::format("{} (HostName {})", m_target.name, m_target.hostname);
      fail(ErrorKind::connect, fmt::format("{}: cannot resolve the host name: {}", name, error));
      destroy_session();
      return;
    }
    m_gate_key = m_addresses.front().text;
  }
  m_phase = Phase::gate;
  if (enter_gate()) begin_transport();
  if (m_state == State::failed) destroy_session();
}

bool SshConnection::enter_gate() {
  if (m_in_gate) return true;
  if (m_target.context && !m_target.context->enter_handshake(m_gate_key)) return false;
  m_in_gate = true;
  return true;
}

void SshConnection::leave_gate() {
  if (!m_in_gate) return;
  m_in_gate = false;
  if (m_target.context) m_target.context->leave_handshake(m_gate_key);
}

void SshConnection::begin_transport() {
  if (m_first_attempt == Clock::time_point{}) m_first_attempt = m_now;
  m_bytes_in = 0;
  m_first_bytes.clear();
  m_peer_closed = false;
  m_socket_errno = 0;
  if (m_via) {
    m_tunnel = m_via->open_tunnel(m_target.hostname, m_target.port, m_now);
    set_attempt_deadline();
    m_phase = Phase::tunnel;
    return;
  }
  if (!m_target.proxy_command.empty()) {
    std::string error;
    m_proxy = ProxyCommand::start(m_target.proxy_command, error);
    if (!m_proxy) {
      fail(ErrorKind::connect, fmt::format("{}: cannot start its ProxyCommand ({}): {}", m_display,
                                           m_target.proxy_command, error));
      return;
    }
    m_fd = m_proxy->take_fd();
    set_attempt_deadline();
    begin_handshake();
    return;
  }
  m_address_index = 0;
  m_connect_errors.clear();
  connect_next_address();
}

void SshConnection::connect_next_address() {
  while (m_address_index < m_addresses.size()) {
    const SocketAddress& address = m_addresses[m_address_index];
    m_display = host_part(address.text) == m_target.name
                    ? address.text
                    : fmt::format("{} ({})", m_target.name, address.text);
    bool in_progress = false;
    int error_number = 0;
    int fd = start_tcp_connect(address, in_progress, error_number);
    if (fd < 0) {
      m_connect_errors += fmt::format("{}{}: {}", m_connect_errors.empty() ? "" : "; ",
                                      address.text, lowercase_first(std::strerror(error_number)));
      ++m_address_index;
      continue;
    }
    m_fd = fd;
    set_attempt_deadline();
    m_bytes_in = 0;
    m_first_bytes.clear();
    m_peer_closed = false;
    m_socket_errno = 0;
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

void SshConnection::begin_handshake() {
  initialize_libssh2();
  m_session = libssh2_session_init_ex(nullptr, nullptr, nullptr, this);
  if (!m_session) {
    fail(ErrorKind::protocol, fmt::format("{}: cannot create an SSH session", m_display));
    return;
  }
  libssh2_session_callback_set(m_session, LIBSSH2_CALLBACK_RECV,
                               reinterpret_cast<void*>(&SshConnection::receive_hook));
  libssh2_session_set_blocking(m_session, 0);
  if (m_target.compression) libssh2_session_flag(m_session, LIBSSH2_FLAG_COMPRESS, 1);
  std::string methods = host_key_method_preference(m_session, host_key_policy());
  if (!methods.empty()) {
    libssh2_session_method_pref(m_session, LIBSSH2_METHOD_HOSTKEY, methods.c_str());
  }
  ++m_handshake_attempt;
  m_phase = Phase::handshake;
}

ssize_t SshConnection::receive_hook(int fd, void* buffer, size_t length, int flags,
                                    void** abstract) {
  auto* self = static_cast<SshConnection*>(*abstract);
  ssize_t received = ::recv(fd, buffer, length, flags);
  if (received > 0) {
    // A short read is a reply, not a stream: acknowledge what comes next at
    // once. Otherwise a peer that sends two small packets in a row without
    // TCP_NODELAY (sshd does, outside terminal sessions; a jump host's sshd
    // relays every packet from the host behind it so) holds the second until
    // our delayed ACK, 40 ms later. Linux leaves quick-ACK mode by itself,
    // so it is asked again after each read.
    if (self->connects_over_tcp() && static_cast<size_t>(received) < length) {
      int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
    }
    if (self->m_first_bytes.size() < k_first_bytes_kept) {
      size_t keep =
          std::min(static_cast<size_t>(received), k_first_bytes_kept - self->m_first_bytes.size());
      self->m_first_bytes.append(static_cast<const char*>(buffer), keep);
    }
    self->m_bytes_in += static_cast<size_t>(received);
    self->m_last_inbound = self->m_now;
    return received;
  }
  if (received == 0) {
    self->m_peer_closed = true;
    return 0;
  }
  int error_number = errno;
  if (error_number == EAGAIN || error_number == EWOULDBLOCK || error_number == EINTR) {
    return -EAGAIN;
  }
  self->m_socket_errno = error_number;
  return -error_number;
}

void SshConnection::set_attempt_deadline() {
  m_attempt_deadline = m_now + m_target.options.connect_timeout;
  m_prompted_before = m_target.context ? m_target.context->time_in_prompts() : Clock::duration{};
}

Clock::time_point SshConnection::attempt_deadline() const {
  // Time spent waiting for someone to type a passphrase does not count.
  if (!m_target.context) return m_attempt_deadline;
  return m_attempt_deadline + (m_target.context->time_in_prompts() - m_prompted_before);
}

HostKeyPolicy SshConnection::host_key_policy() const {
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

void SshConnection::step_connecting(Clock::time_point now) {
  if (m_phase == Phase::backoff) {
    if (now < m_backoff_until) return;
    m_phase = Phase::gate;
  }
  if (m_phase == Phase::gate) {
    if (!enter_gate()) return;
    m_progressed = true;
    begin_transport();
    if (m_state == State::failed) return;
  }

  if (now >= attempt_deadline()) {
    const char* doing = m_phase == Phase::tcp_connect ? "connecting"
                        : m_phase == Phase::tunnel    ? "waiting for the jump host's tunnel"
                        : m_phase == Phase::handshake ? "waiting for the SSH handshake"
                                                      : "authenticating";
    fail(ErrorKind::timeout,
         fmt::format("{}: timed out after {} while {}", m_display,
                     describe_duration(m_target.options.connect_timeout), doing));
    return;
  }

  if (m_phase == Phase::tunnel) {
    if (m_tunnel->state == Tunnel::State::waiting) return;
    m_progressed = true;
    if (m_tunnel->state == Tunnel::State::failed) {
      fail(m_tunnel->error.kind(), fmt::format("{}: cannot reach it through its jump host: {}",
                                               m_display, m_tunnel->error.message()));
      return;
    }
    m_fd = m_tunnel->take_fd();
    m_tunnel.reset();
    begin_handshake();
    if (m_state == State::failed) return;
  }

  if (m_phase == Phase::tcp_connect) {
    int result = tcp_connect_result(m_fd);
    if (result < 0) return;
    if (result > 0) {
      m_connect_errors +=
          fmt::format("{}{}: {}", m_connect_errors.empty() ? "" : "; ",
                      m_addresses[m_address_index].text, lowercase_first(std::strerror(result)));
      ::close(m_fd);
      m_fd = -1;
      ++m_address_index;
      connect_next_address();
      return;
    }
    m_progressed = true;
    begin_handshake();
    if (m_state == State::failed) return;
  }

  if (m_phase == Phase::handshake) {
    int rc = libssh2_session_handshake(m_session, m_fd);
    if (rc == LIBSSH2_ERROR_EAGAIN) return;
    m_progressed = true;
    if (rc != 0) {
      bool banner_seen = has_ssh_banner(m_first_bytes);
      // sshd says so when it drops a handshake beyond MaxStartups: then keep
      // trying for as long as a connection may take. Any other close before
      // the banner is retried a few times.
      bool max_startups = m_first_bytes.find("MaxStartups") != std::string::npos;
      bool retry = max_startups ? now - m_first_attempt < m_target.options.connect_timeout
                                : m_handshake_attempt < k_max_handshake_attempts;
      if (!banner_seen && retry) {
        // Allow fewer at once, and try again shortly, at a jittered time so
        // that a burst spreads out.
        if (m_target.context) m_target.context->handshake_refused(m_gate_key);
        destroy_session();
        std::uniform_real_distribution<double> jitter(0.5, 1.5);
        auto backoff = std::min<Clock::duration>(
            k_first_backoff * (1 << std::min(m_handshake_attempt - 1, 10)), k_max_backoff);
        m_backoff_until =
            now + std::chrono::duration_cast<Clock::duration>(backoff * jitter(m_random));
        m_phase = Phase::backoff;
        return;
      }
      if (!banner_seen && !m_target.proxy_command.empty()) {
        fail(ErrorKind::connect,
             fmt::format("{}: its ProxyCommand ({}) ended before the SSH handshake, {} times; "
                         "run it by hand to see why",
                         m_display, m_target.proxy_command, m_handshake_attempt));
      } else if (!banner_seen) {
        std::string said = m_first_bytes.empty()
                               ? std::string()
                               : fmt::format(" (it said \"{}\")", first_line(m_first_bytes));
        fail(ErrorKind::connect,
             fmt::format("{}: the server closed the connection before the SSH handshake{}, "
                         "{} times; is it an SSH server? sshd's MaxStartups may be refusing "
                         "this many connections at once",
                         m_display, said, m_handshake_attempt));
      } else {
        fail(ErrorKind::protocol,
             fmt::format("{}: SSH handshake failed: {}", m_display, last_error(m_session)));
      }
      return;
    }
    if (std::optional<Status> refused =
            verify_host_key(m_session, host_key_policy(), m_host_key_status)) {
      fail(refused->kind(), refused->message());
      return;
    }
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
    m_auth = std::make_unique<Authenticator>(m_session, std::move(settings));
    m_phase = Phase::authenticate;
  }

  if (m_phase == Phase::authenticate) {
    Authenticator::Progress progress = m_auth->step();
    if (progress == Authenticator::Progress::pending) return;
    m_progressed = true;
    if (progress == Authenticator::Progress::failed) {
      fail(m_auth->error().kind(), m_auth->error().message());
      return;
    }
    m_hints.working_identity = m_auth->identity();
    m_auth_method = m_auth->method();
    m_auth.reset();
    leave_gate();
    libssh2_keepalive_config(m_session, 1, 1);
    m_phase = Phase::ready;
    m_state = State::ready;
    m_was_ready = true;
    m_last_inbound = now;
  }
}

// ---------------------------------------------------------------------------
// The event-loop interface

void SshConnection::poll_fds(std::vector<pollfd>& out) const {
  if (m_fd < 0) return;
  short events = 0;
  switch (m_phase) {
    case Phase::tcp_connect:
      events = POLLOUT;
      break;
    case Phase::backoff:
    case Phase::done:
      return;
    default:
      if (m_blocked_channel || m_blocked_open) {
        events = POLLOUT;
      } else {
        events = POLLIN;
        if (blocked_outbound()) events |= POLLOUT;
      }
  }
  out.push_back(pollfd{m_fd, events, 0});
  for (const auto& channel : m_channels) {
    if (channel->bridge_fd < 0) continue;
    short bridge_events = 0;
    if (channel->to_remote.empty() && !channel->local_eof) bridge_events |= POLLIN;
    if (!channel->to_local.empty()) bridge_events |= POLLOUT;
    if (bridge_events) out.push_back(pollfd{channel->bridge_fd, bridge_events, 0});
  }
}

void SshConnection::step(Clock::time_point now) {
  m_now = now;
  m_progressed = false;
  if (m_state == State::connecting) step_connecting(now);
  if (m_state == State::ready || m_state == State::closing) step_session(now);
  if (m_state == State::failed) destroy_session();
}

std::optional<Clock::time_point> SshConnection::deadline() const {
  if (m_state == State::failed || m_state == State::closed) return std::nullopt;
  if (m_progressed) return m_now;
  switch (m_phase) {
    case Phase::gate:
      return m_now + k_gate_poll;
    case Phase::tcp_connect:
    case Phase::tunnel:
    case Phase::handshake:
    case Phase::authenticate:
      return attempt_deadline();
    case Phase::backoff:
      return m_backoff_until;
    case Phase::disconnect:
      return m_disconnect_deadline;
    case Phase::done:
      return std::nullopt;
    case Phase::ready:
      break;
  }
  std::optional<Clock::time_point> next;
  auto consider = [&](Clock::time_point at) {
    if (!next || at < *next) next = at;
  };
  if (!m_waiting.empty() && m_refused_until > m_now) consider(m_refused_until);
  auto interval = m_target.options.keepalive_interval;
  if (interval.count() > 0 && m_busy_since != Clock::time_point{}) {
    Clock::time_point since = std::max(m_last_inbound, m_busy_since);
    consider(since + interval * (m_target.options.keepalive_count_max + 1));
    consider(std::max(since + interval, m_last_keepalive + interval));
  }
  return next;
}

// ---------------------------------------------------------------------------
// Work

bool SshConnection::accepts_work(Clock::time_point now) const {
  if (m_state != State::ready) return false;
  if (now < m_refused_until) return false;
  return !m_limit || load() < *m_limit;
}

long SshConnection::busy_channels() const {
  return std::count_if(m_channels.begin(), m_channels.end(),
                       [](const auto& channel) { return !channel->idle(); });
}

int SshConnection::load() const {
  // An idle launcher takes the next job: it counts as room, not load. A
  // retired one (a job left processes behind on it) keeps its session until
  // they end: that is load, so that under MaxSessions the pool places the
  // next job on another connection instead of waiting for them.
  return static_cast<int>(busy_channels() + retired_launchers() + (m_opening ? 1 : 0) +
                          static_cast<long>(m_waiting.size()));
}

long SshConnection::retired_launchers() const {
  return std::count_if(m_channels.begin(), m_channels.end(), [](const auto& channel) {
    return channel->launcher && channel->idle() && channel->step != Channel::Step::run;
  });
}

void SshConnection::return_waiting_work() {
  while (!m_waiting.empty()) {
    if (m_waiting.front().kind != ChannelWork::Kind::pump) {
      m_returned.push_back(std::move(m_waiting.front()));
      m_progressed = true;
    }
    m_waiting.pop_front();
  }
}

void SshConnection::add_work(ChannelWork work) {
  if (work.kind == ChannelWork::Kind::signal) {
    auto first_job = std::find_if(m_waiting.begin(), m_waiting.end(), [](const ChannelWork& w) {
      return w.kind != ChannelWork::Kind::signal;
    });
    m_waiting.insert(first_job, std::move(work));
  } else {
    m_waiting.push_back(std::move(work));
  }
  m_progressed = true;
}

std::vector<ChannelWork> SshConnection::take_returned() { return std::exchange(m_returned, {}); }

bool SshConnection::has_jobs() const {
  auto is_job = [](const ChannelWork& work) { return work.kind == ChannelWork::Kind::job; };
  if (std::any_of(m_waiting.begin(), m_waiting.end(), is_job)) return true;
  if (m_opening && is_job(m_opening->work) && !m_opening->silent) return true;
  return std::any_of(m_channels.begin(), m_channels.end(), [&](const auto& channel) {
    return is_job(channel->work) && !channel->silent;
  });
}

bool SshConnection::signal_task(JobId job, int signal) {
  auto is_this = [&](const ChannelWork& work) {
    return work.kind == ChannelWork::Kind::job && work.job == job;
  };
  std::string why = fmt::format("stopped by SIG{} before it started", signal_name(signal));
  for (auto it = m_waiting.begin(); it != m_waiting.end(); ++it) {
    if (is_this(*it)) {
      m_waiting.erase(it);
      m_sink.job_exited(job, not_started(why, signal));
      return true;
    }
  }
  if (m_opening && is_this(m_opening->work)) {
    if (!m_opening->silent) m_sink.job_exited(job, not_started(why, signal));
    m_opening->silent = true;
    return true;
  }
  for (auto& channel : m_channels) {
    if (!is_this(channel->work)) continue;
    if (channel->silent) return true;
    if (!channel->exec_attempted) {
      channel->silent = true;
      m_sink.job_exited(job, not_started(why, signal));
    } else if (channel->pgid_known && channel->pgid > 0) {
      send_signal(*channel, signal);
    } else {
      channel->pending_signals.push_back(signal);
    }
    return true;
  }
  return false;
}

void SshConnection::send_signal(Channel& channel, int signal) {
  ChannelWork work;
  work.kind = ChannelWork::Kind::signal;
  work.job = channel.work.job;
  work.pgid = channel.pgid;
  work.signal = signal;
  int in_use = static_cast<int>(m_channels.size() + (m_opening ? 1 : 0));
  if (m_limit && in_use >= *m_limit) {
    // No room for another channel here; any connection to the host will do.
    m_returned.push_back(std::move(work));
  } else {
    add_work(std::move(work));
  }
}

void SshConnection::close() {
  if (m_state == State::connecting) {
    abandon();
    m_state = State::closed;
    return;
  }
  if (m_state == State::ready) {
    m_state = State::closing;
    m_progressed = true;  // step soon: idle launchers are to be ended
  }
}

void SshConnection::abandon() {
  destroy_session();
  m_waiting.clear();
  m_phase = Phase::done;
  if (m_state != State::failed) m_state = State::closed;
}

void SshConnection::drop(const std::string& reason) {
  lose(reason);
  destroy_session();
}

std::vector<JobId> SshConnection::lost_jobs() const { return m_lost; }

std::vector<ChannelWork> SshConnection::take_unstarted() { return std::exchange(m_unstarted, {}); }

// ---------------------------------------------------------------------------
// Running channels

bool SshConnection::blocked_outbound() const {
  return m_session &&
         (libssh2_session_block_directions(m_session) & LIBSSH2_SESSION_BLOCK_OUTBOUND);
}

SshConnection::Outcome SshConnection::classify(int rc, Channel* channel) {
  if (rc == LIBSSH2_ERROR_EAGAIN || rc == LIBSSH2_ERROR_BAD_USE) {
    // A request that is half sent must be completed by the same call before
    // any other call may send.
    if (blocked_outbound()) {
      if (channel) {
        m_blocked_channel = channel;
      } else {
        m_blocked_open = true;
      }
    }
    return Outcome::blocked;
  }
  if (is_session_error(rc)) {
    lose(socket_failure());
    return Outcome::broken;
  }
  return Outcome::progressed;
}

bool SshConnection::send_queue_empty() const {
  // libssh2 cannot resume a keepalive that was only partly written (the
  // packet lives on its stack), so send one only when it surely fits.
  if (blocked_outbound() || m_blocked_channel || m_blocked_open) return false;
  int queued = 0;
  return ioctl(m_fd, SIOCOUTQ, &queued) == 0 && queued < 4096;
}

std::string SshConnection::socket_failure() const {
  if (m_socket_errno != 0) return lowercase_first(std::strerror(m_socket_errno));
  if (m_peer_closed) return "the server closed the connection";
  return last_error(m_session);
}

void SshConnection::step_session(Clock::time_point now) {
  // A half-sent request goes first.
  if (m_blocked_channel) {
    Channel* channel = std::exchange(m_blocked_channel, nullptr);
    Outcome outcome = step_channel(*channel);
    if (outcome == Outcome::broken) return;
    if (outcome == Outcome::finished) {
      m_channels.erase(std::find_if(m_channels.begin(), m_channels.end(),
                                    [&](const auto& c) { return c.get() == channel; }));
    }
    if (m_blocked_channel) return;
  }
  if (m_blocked_open) {
    m_blocked_open = false;
    if (step_open() == Outcome::broken) return;
    if (m_blocked_open) return;
  }

  assign_to_launchers();
  // Open channels, one at a time; each needs the server's answer.
  while (true) {
    Outcome outcome = step_open();
    if (outcome == Outcome::broken || m_blocked_open) return;
    if (outcome != Outcome::progressed) break;
  }

  // A read on one channel may queue packets for the others: step them all.
  for (size_t i = 0; i < m_channels.size();) {
    Outcome outcome = step_channel(*m_channels[i]);
    if (outcome == Outcome::broken) return;
    if (outcome == Outcome::finished) {
      m_channels.erase(m_channels.begin() + static_cast<std::ptrdiff_t>(i));
      m_progressed = true;
    } else {
      ++i;
    }
    if (m_blocked_channel) return;
  }

  if (m_peer_closed || m_socket_errno != 0) {
    lose(socket_failure());
    return;
  }

  keepalive(now);
  if (m_state == State::failed) return;

  bool busy = m_opening || !m_waiting.empty() || busy_channels() > 0;
  if (!busy && m_state == State::ready) {
    // Idle launchers are read on every step; without them, peek.
    if (m_channels.empty()) maybe_start_pump();
    return;
  }
  if (!busy && m_state == State::closing && !m_channels.empty()) {
    // Idle launchers end at EOF on their stdin.
    for (auto& channel : m_channels) {
      if (channel->step == Channel::Step::run) {
        channel->step = Channel::Step::send_eof;
        m_progressed = true;
      }
    }
    return;
  }
  if (!busy && m_state == State::closing) {
    if (m_phase != Phase::disconnect) {
      m_phase = Phase::disconnect;
      m_disconnect_deadline = now + k_disconnect_grace;
    }
    int rc = libssh2_session_disconnect(m_session, "runner is done");
    if (rc == LIBSSH2_ERROR_EAGAIN && now < m_disconnect_deadline) return;
    destroy_session();
    m_phase = Phase::done;
    m_state = State::closed;
    m_progressed = true;
  }
}

void SshConnection::maybe_start_pump() {
  // Nothing reads an idle session, yet the server may speak (a keepalive
  // request from ClientAliveInterval, a disconnect). Peek, and let a
  // throwaway channel open make libssh2 process what arrived.
  char byte;
  ssize_t peeked = ::recv(m_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (peeked == 0) {
    lose("the server closed the connection");
  } else if (peeked > 0) {
    ChannelWork pump;
    pump.kind = ChannelWork::Kind::pump;
    m_waiting.push_back(pump);
    m_progressed = true;
  } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    lose(lowercase_first(std::strerror(errno)));
  }
}

SshConnection::Outcome SshConnection::step_open() {
  if (!m_opening) {
    if (m_waiting.empty() || m_now < m_refused_until) return Outcome::finished;
    if (m_limit && static_cast<int>(m_channels.size()) >= *m_limit &&
        m_waiting.front().kind != ChannelWork::Kind::tunnel) {
      // Retired launchers keep their sessions until what their jobs left
      // behind ends: the pool places the work on another connection.
      if (retired_launchers() > 0) return_waiting_work();
      return Outcome::finished;
    }
    m_opening = std::make_unique<Channel>();
    m_opening->work = std::move(m_waiting.front());
    m_waiting.pop_front();
    m_opening->launcher = m_opening->work.kind == ChannelWork::Kind::job && !m_hints.no_launcher;
    if (!m_round_trip) m_open_started = m_now;
  }
  if (m_opening->work.kind == ChannelWork::Kind::tunnel) return open_tunnel_channel();
  LIBSSH2_CHANNEL* handle = libssh2_channel_open_session(m_session);
  if (handle) {
    m_opening->handle = handle;
    m_channels.push_back(std::move(m_opening));
    m_progressed = true;
    if (!m_round_trip) m_round_trip = m_now - m_open_started;
    return Outcome::progressed;
  }
  int rc = libssh2_session_last_errno(m_session);
  if (rc == LIBSSH2_ERROR_EAGAIN) return classify(rc, nullptr);
  if (is_session_error(rc)) return classify(rc, nullptr);

  std::unique_ptr<Channel> refused = std::move(m_opening);
  m_progressed = true;
  int open_now = static_cast<int>(m_channels.size());
  bool is_job = refused->work.kind == ChannelWork::Kind::job;
  bool settling = m_last_close != Clock::time_point{} && m_now - m_last_close < k_close_settling;
  if (rc == LIBSSH2_ERROR_CHANNEL_FAILURE && settling) {
    // Probably the slot of a channel that just closed: try again shortly.
    if (!refused->silent) m_waiting.push_front(std::move(refused->work));
    m_refused_until = m_now + k_refusal_pause;
    return Outcome::finished;
  }
  if (rc != LIBSSH2_ERROR_CHANNEL_FAILURE || open_now == 0) {
    if (is_job && !refused->silent) {
      JobExit exit;
      exit.error = fmt::format("{}: the server refused a session channel: {}", m_display,
                               last_error(m_session));
      m_sink.job_exited(refused->work.job, exit);
    }
    return Outcome::progressed;
  }
  // sshd's MaxSessions: remember this connection's limit and hand the work
  // back, so that the pool places it on another connection.
  if (!m_limit || open_now < *m_limit) m_limit = open_now;
  if (!m_hints.channel_limit || *m_limit < *m_hints.channel_limit) m_hints.channel_limit = m_limit;
  if (refused->work.kind != ChannelWork::Kind::pump && !refused->silent) {
    m_returned.push_back(std::move(refused->work));
  }
  return_waiting_work();
  return Outcome::finished;
}

SshConnection::Outcome SshConnection::open_tunnel_channel() {
  Channel& opening = *m_opening;
  if (!opening.tunnel) {
    opening.tunnel = opening.work.tunnel.lock();
    if (!opening.tunnel) {
      // The next host's connection gave up before its tunnel was asked for.
      m_opening.reset();
      m_progressed = true;
      return Outcome::progressed;
    }
  }
  Tunnel& tunnel = *opening.tunnel;
  LIBSSH2_CHANNEL* handle =
      libssh2_channel_direct_tcpip_ex(m_session, tunnel.host.c_str(), tunnel.port, "127.0.0.1", 22);
  if (handle) {
    opening.handle = handle;
    m_channels.push_back(std::move(m_opening));
    m_progressed = true;
    if (!m_round_trip) m_round_trip = m_now - m_open_started;
    return Outcome::progressed;
  }
  int rc = libssh2_session_last_errno(m_session);
  if (rc == LIBSSH2_ERROR_EAGAIN || is_session_error(rc)) return classify(rc, nullptr);
  std::string why = last_error(m_session);
  std::string hint;
  if (why.find("prohibited") != std::string::npos) {
    hint =
        "; the jump host's sshd does not allow it: check AllowTcpForwarding and PermitOpen in "
        "its sshd_config";
  } else if (why.find("connect failed") != std::string::npos) {
    hint =
        "; the jump host cannot connect there: is the HostName right, and the port open "
        "from the jump host?";
  }
  tunnel.state = Tunnel::State::failed;
  tunnel.error = {ErrorKind::connect, fmt::format("{} refused a tunnel to {}:{} ({}){}", m_display,
                                                  tunnel.host, tunnel.port, why, hint)};
  m_opening.reset();
  m_progressed = true;
  return Outcome::progressed;
}

SshConnection::Outcome SshConnection::start_bridge(Channel& channel) {
  std::shared_ptr<Tunnel> tunnel = std::move(channel.tunnel);
  m_progressed = true;
  if (!tunnel || tunnel.use_count() == 1) {
    // The next host's connection gave up meanwhile.
    channel.silent = true;
    channel.step = Channel::Step::close;
    return Outcome::progressed;
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
    tunnel->state = Tunnel::State::failed;
    tunnel->error = {ErrorKind::connect,
                     fmt::format("{}: cannot make a socket pair for a tunnel: {}", m_display,
                                 std::strerror(errno))};
    channel.silent = true;
    channel.step = Channel::Step::close;
    return Outcome::progressed;
  }
  tunnel->fd = pair[0];
  tunnel->state = Tunnel::State::open;
  channel.bridge_fd = pair[1];
  channel.exec_attempted = true;
  channel.step = Channel::Step::bridge;
  return Outcome::progressed;
}

SshConnection::Outcome SshConnection::pump_tunnel(Channel& channel, bool& done) {
  done = false;
  char buffer[32 * 1024];
  // Towards the next host: what came through the channel.
  while (true) {
    if (!channel.to_local.empty()) {
      ssize_t sent = ::send(channel.bridge_fd, channel.to_local.data(), channel.to_local.size(),
                            MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent > 0) {
        channel.to_local.erase(0, static_cast<size_t>(sent));
        m_progressed = true;
        continue;
      }
      if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
      done = true;  // the next host's connection is gone
      return Outcome::progressed;
    }
    ssize_t got = libssh2_channel_read(channel.handle, buffer, sizeof buffer);
    if (got > 0) {
      channel.to_local.assign(buffer, static_cast<size_t>(got));
      m_progressed = true;
      continue;
    }
    if (got == 0) break;
    Outcome outcome = classify(static_cast<int>(got), &channel);
    if (outcome == Outcome::broken || m_blocked_channel == &channel) return outcome;
    break;
  }
  if (channel.to_local.empty() && libssh2_channel_eof(channel.handle)) {
    done = true;  // the far end closed
    return Outcome::progressed;
  }
  // Towards the jump host: what the next host's connection wrote.
  while (true) {
    if (!channel.to_remote.empty()) {
      ssize_t written =
          libssh2_channel_write(channel.handle, channel.to_remote.data(), channel.to_remote.size());
      if (written > 0) {
        channel.to_remote.erase(0, static_cast<size_t>(written));
        m_progressed = true;
        continue;
      }
      if (written == 0) break;
      Outcome outcome = classify(static_cast<int>(written), &channel);
      if (outcome == Outcome::broken || m_blocked_channel == &channel) return outcome;
      break;
    }
    if (channel.local_eof) {
      done = true;
      return Outcome::progressed;
    }
    ssize_t got = ::recv(channel.bridge_fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0) {
      channel.to_remote.assign(buffer, static_cast<size_t>(got));
      m_progressed = true;
      continue;
    }
    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      channel.local_eof = true;
      m_progressed = true;
      continue;
    }
    break;
  }
  return Outcome::blocked;
}

SshConnection::Outcome SshConnection::step_channel(Channel& channel) {
  using Step = Channel::Step;
  if (channel.launcher && (channel.step == Step::exec || channel.step == Step::write_line ||
                           channel.step == Step::run)) {
    Outcome outcome = step_launcher(channel);
    if (outcome == Outcome::broken || m_blocked_channel == &channel) return outcome;
    if (channel.step == Step::exec || channel.step == Step::write_line ||
        channel.step == Step::run) {
      return Outcome::blocked;
    }
  }
  if (channel.work.kind == ChannelWork::Kind::tunnel) {
    if (channel.step == Step::exec) start_bridge(channel);
    if (channel.step == Step::bridge) {
      bool done = false;
      Outcome outcome = pump_tunnel(channel, done);
      if (outcome == Outcome::broken || m_blocked_channel == &channel) return outcome;
      if (!done) return Outcome::blocked;
      ::close(channel.bridge_fd);
      channel.bridge_fd = -1;
      channel.step = Step::close;
      m_progressed = true;
    }
  }
  if (channel.step == Step::exec) {
    if (channel.idle() || channel.silent) {
      channel.step = Step::release;
    } else {
      if (channel.request.empty()) channel.request = std::string(k_login_command);
      channel.exec_attempted = true;
      bool answer_lost = false;
      Outcome outcome = send_exec(channel, answer_lost);
      if (outcome != Outcome::progressed) return outcome;
      if (answer_lost) {
        // Its script never went out, so nothing of it ran: the work waits
        // for another channel.
        if (!channel.silent) m_waiting.push_front(std::move(channel.work));
        channel.clear_work();
        channel.step = Step::release;
      } else if (channel.step == Step::exec) {
        start_markers(channel);
        const std::string& token = channel.out_marker->token();
        channel.line = channel.work.kind == ChannelWork::Kind::job
                           ? job_channel_script(channel.work.command, token)
                           : control_channel_script(
                                 kill_group_command(channel.work.pgid, channel.work.signal), token);
        channel.line_sent = 0;
        channel.step = Step::write_script;
      }
      m_progressed = true;
    }
  }
  if (channel.step == Step::write_script) {
    Outcome outcome = write_stdin(channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::send_eof;
  }
  if (channel.step == Step::send_eof) {
    int rc = libssh2_channel_send_eof(channel.handle);
    if (rc != 0) {
      Outcome outcome = classify(rc, &channel);
      if (outcome != Outcome::progressed) return outcome;
    }
    channel.step = Step::read;
  }
  if (channel.step == Step::read) {
    Outcome outcome = read_channel(channel);
    if (outcome == Outcome::broken || m_blocked_channel == &channel) return outcome;
    if (!libssh2_channel_eof(channel.handle)) return Outcome::blocked;
    channel.step = Step::close;
    m_progressed = true;
  }
  if (channel.step == Step::close) {
    int rc = libssh2_channel_close(channel.handle);
    if (rc != 0) {
      Outcome outcome = classify(rc, &channel);
      if (outcome != Outcome::progressed) return outcome;
    }
    channel.step = Step::wait_closed;
  }
  if (channel.step == Step::wait_closed) {
    int rc = libssh2_channel_wait_closed(channel.handle);
    if (rc != 0) {
      Outcome outcome = classify(rc, &channel);
      if (outcome != Outcome::progressed) return outcome;
    }
    finish_channel(channel);
    channel.step = Step::release;
  }
  if (channel.step == Step::release) {
    int rc = libssh2_channel_free(channel.handle);
    if (rc != 0) {
      Outcome outcome = classify(rc, &channel);
      if (outcome != Outcome::progressed) return outcome;
    }
    channel.handle = nullptr;
    m_last_close = m_now;
    return Outcome::finished;
  }
  return Outcome::blocked;
}

SshConnection::Outcome SshConnection::send_exec(Channel& channel, bool& answer_lost) {
  answer_lost = false;
  int rc = libssh2_channel_process_startup(channel.handle, "exec", 4, channel.request.data(),
                                           static_cast<unsigned>(channel.request.size()));
  if (rc == 0) return Outcome::progressed;
  if (rc == LIBSSH2_ERROR_SOCKET_NONE && !m_peer_closed && m_socket_errno == 0) {
    // libssh2 1.10 in non-blocking mode sometimes loses the server's answer
    // to an exec request and returns -1 although the session is fine
    // (libssh2 issue 671). Only this channel is gone.
    answer_lost = true;
    return Outcome::progressed;
  }
  Outcome outcome = classify(rc, &channel);
  if (outcome != Outcome::progressed) return outcome;
  if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    JobExit exit;
    exit.error = fmt::format("{}: the server refused to run the command: {}", m_display,
                             last_error(m_session));
    m_sink.job_exited(channel.work.job, exit);
  }
  channel.silent = true;
  channel.step = Channel::Step::release;
  return Outcome::progressed;
}

SshConnection::Outcome SshConnection::read_channel(Channel& channel) {
  char buffer[32 * 1024];
  for (int stream : {0, SSH_EXTENDED_DATA_STDERR}) {
    // A job that writes as fast as the link carries would otherwise keep
    // this loop (and the whole event loop) to itself: take a share, and
    // come back at once (m_progressed) for the rest.
    for (size_t taken = 0; taken < k_output_share;) {
      ssize_t got = libssh2_channel_read_ex(channel.handle, stream, buffer, sizeof buffer);
      if (got > 0) {
        m_progressed = true;
        taken += static_cast<size_t>(got);
        std::string_view bytes(buffer, static_cast<size_t>(got));
        take_channel_output(channel, stream, bytes);
        continue;
      }
      if (got == 0) break;
      Outcome outcome = classify(static_cast<int>(got), &channel);
      if (outcome == Outcome::broken || m_blocked_channel == &channel) return outcome;
      break;
    }
  }
  return Outcome::blocked;
}

void SshConnection::take_output(Channel& channel, int stream, std::string_view bytes) {
  if (stream == 0) {
    handle_stdout(channel, bytes);
  } else if (channel.work.kind == ChannelWork::Kind::job && !channel.silent) {
    m_sink.job_output(channel.work.job, OutputStream::err, bytes);
  } else if (channel.work.kind == ChannelWork::Kind::signal) {
    channel.control_errors = keep_tail(channel.control_errors + std::string(bytes), k_kept_words);
  }
}

void SshConnection::handle_stdout(Channel& channel, std::string_view bytes) {
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  JobId job = channel.work.job;
  if (channel.pgid_known) {
    m_sink.job_output(job, OutputStream::out, bytes);
    return;
  }
  // Hold everything until the wrapper's line: lines before it come from the
  // login shell's start-up files and are passed on after job_started.
  channel.head.append(bytes);
  size_t& line_start = channel.head_scanned;
  size_t newline;
  while ((newline = channel.head.find('\n', line_start)) != std::string::npos) {
    std::string_view line(channel.head.data() + line_start, newline + 1 - line_start);
    if (std::optional<long> pgid = parse_pgid_line(line)) {
      std::string text = std::exchange(channel.head, {});
      // On a launcher that ran a job before, what came first is that job's
      // stray output, not this one's.
      size_t from = channel.drop_head ? 0 : line_start;
      text.erase(from, newline + 1 - from);
      channel.pgid_known = true;
      channel.pgid = *pgid;
      m_sink.job_started(job, *pgid);
      for (int signal : std::exchange(channel.pending_signals, {})) send_signal(channel, signal);
      if (!text.empty()) m_sink.job_output(job, OutputStream::out, text);
      return;
    }
    line_start = newline + 1;
  }
  if (channel.head.size() > k_max_head) {
    channel.pgid_known = true;
    m_sink.job_output(job, OutputStream::out, std::exchange(channel.head, {}));
  }
}

void SshConnection::finish_channel(Channel& channel) {
  if (channel.launcher) {
    launcher_closed(channel);
    return;
  }
  if (channel.work.kind == ChannelWork::Kind::signal) {
    control_ended(channel, libssh2_channel_get_exit_status(channel.handle));
    return;
  }
  if (channel.work.kind != ChannelWork::Kind::job || channel.silent) return;
  JobId job = channel.work.job;
  bool wrapper_ran = channel.pgid_known;
  release_head(channel);
  JobExit exit;
  exit.code = libssh2_channel_get_exit_status(channel.handle);
  char* signal = nullptr;
  size_t signal_length = 0;
  libssh2_channel_get_exit_signal(channel.handle, &signal, &signal_length, nullptr, nullptr,
                                  nullptr, nullptr);
  if (signal) {
    exit.signal.assign(signal, signal_length);
    exit.code = -1;
    libssh2_free(m_session, signal);
  }
  if (!wrapper_ran) exit.error = login_shell_failure(exit.code);
  m_sink.job_exited(job, exit);
}

void SshConnection::release_head(Channel& channel) {
  std::string head = std::exchange(channel.head, {});
  if (!head.empty() && !channel.drop_head)
    m_sink.job_output(channel.work.job, OutputStream::out, head);
}

std::string SshConnection::login_shell_failure(int status) const {
  return fmt::format(
      "{}: the job did not start: the login shell of {} ended (status {}) without running the "
      "command; is it a POSIX shell that accepts `-c`?",
      m_display, m_target.user, status);
}

void SshConnection::keepalive(Clock::time_point now) {
  auto interval = m_target.options.keepalive_interval;
  bool busy = !m_channels.empty() || m_opening;
  if (!busy || interval.count() <= 0) {
    m_busy_since = {};
    return;
  }
  if (m_busy_since == Clock::time_point{}) m_busy_since = now;
  Clock::time_point since = std::max(m_last_inbound, m_busy_since);
  auto silence = now - since;
  int count = std::max(0, m_target.options.keepalive_count_max);
  if (silence >= interval * (count + 1)) {
    lose(fmt::format(
        "no answer for {} (keepalive)",
        describe_duration(std::chrono::duration_cast<std::chrono::milliseconds>(silence))));
    return;
  }
  if (silence >= interval && now - m_last_keepalive >= interval && send_queue_empty()) {
    int seconds_to_next = 0;
    int rc = libssh2_keepalive_send(m_session, &seconds_to_next);
    m_last_keepalive = now;
    if (rc != 0 && is_session_error(rc)) lose(socket_failure());
  }
}

// ---------------------------------------------------------------------------
// Ending

void SshConnection::fail(ErrorKind kind, const std::string& message) {
  leave_gate();
  m_state = State::failed;
  m_error = {kind, message};
  m_phase = Phase::done;
  while (!m_waiting.empty()) {
    m_unstarted.push_back(std::move(m_waiting.front()));
    m_waiting.pop_front();
  }
}

void SshConnection::lose(const std::string& reason) {
  if (m_state == State::failed) return;
  auto collect = [&](Channel& channel) {
    if (channel.silent || channel.idle()) return;
    if (channel.exec_attempted) {
      if (channel.work.kind == ChannelWork::Kind::job) m_lost.push_back(channel.work.job);
    } else {
      m_unstarted.push_back(channel.work);
    }
  };
  for (auto& channel : m_channels) collect(*channel);
  if (m_opening) collect(*m_opening);
  fail(ErrorKind::disconnected, fmt::format("{}: connection lost: {}", m_display, reason));
}

void SshConnection::destroy_session() {
  leave_gate();
  m_tunnel.reset();
  m_auth.reset();
  m_blocked_channel = nullptr;
  m_blocked_open = false;
  if (m_session) {
    // With the socket shut down no send can return EAGAIN, so freeing the
    // session (which closes its channels) completes in one call.
    if (m_fd >= 0) ::shutdown(m_fd, SHUT_RDWR);
    for (int attempt = 0; attempt < 10; ++attempt) {
      if (libssh2_session_free(m_session) != LIBSSH2_ERROR_EAGAIN) break;
    }
    m_session = nullptr;
  }
  m_channels.clear();
  m_opening.reset();
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
  m_proxy.reset();
}

}  // namespace runner::ssh
