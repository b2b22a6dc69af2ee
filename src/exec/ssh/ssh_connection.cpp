// One SSH connection as the pool and the event loop see it: what it
// waits for, its steps, the work it takes and gives back, and how it ends.
// Setting up is its SshConnector (ssh_connector.cpp), the session's
// channels ssh_session.cpp and which work goes where its ChannelPool
// (ssh_channel_pool.cpp), and what runs on them its ExecChannels,
// Launchers and JumpTunnels (ssh_exec_channel.cpp,
// ssh_launcher_channel.cpp, ssh_jump_tunnel.cpp). Every libssh2 call is
// non-blocking; after LIBSSH2_ERROR_EAGAIN the same call is repeated with
// the same arguments on a later step. Threading: none.
#include "ssh_connection.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "runner/core/debug_log.h"
#include "ssh_jump.h"

namespace runner::ssh {

SshConnection::SshConnection(const HostTarget& target, HostHints& hints, TaskSink& sink,
                             std::shared_ptr<JumpLink> via)
    : m_target(target),
      m_hints(hints),
      m_sink(sink),
      m_via(std::move(via)),
      m_connector(std::make_unique<SshConnector>(target, hints, m_via.get(), m_inbound)),
      m_pool(hints.channel_limit) {}

SshConnection::~SshConnection() { destroy_session(); }

void SshConnection::start(Clock::time_point now) {
  m_now = now;
  m_connector->start(now);
  after_connecting();
  if (m_state == State::failed) destroy_session();
}

void SshConnection::after_connecting() {
  if (m_connector->failed()) {
    fail(m_connector->error().kind(), m_connector->error().message());
    return;
  }
  if (!m_connector->ready()) return;
  ReadySession ready = m_connector->take_session();
  m_connector.reset();
  m_fd = ready.fd;
  m_session = ready.session;
  m_proxy = std::move(ready.proxy);
  m_display = std::move(ready.display);
  m_auth_method = std::move(ready.auth_method);
  m_host_key_status = std::move(ready.host_key_status);
  m_phase = Phase::ready;
  m_state = State::ready;
  m_was_ready = true;
  m_inbound.last_inbound = m_now;
}

void SshConnection::poll_fds(std::vector<pollfd>& out) const {
  if (m_connector) {
    m_connector->poll_fds(out);
    return;
  }
  if (m_fd < 0 || m_phase == Phase::done) return;
  short events = POLLOUT;
  if (!m_pool.blocked()) {
    events = POLLIN;
    if (blocked_outbound()) events |= POLLOUT;
  }
  out.push_back(pollfd{m_fd, events, 0});
  for (const auto& channel : m_pool.channels()) {
    if (const auto* tunnel = std::get_if<TunnelChannel>(&channel->per_kind)) tunnel->poll_fds(out);
  }
}

void SshConnection::step(Clock::time_point now) {
  m_now = now;
  m_progressed = false;
  if (m_state == State::connecting) {
    if (m_connector->step(now)) m_progressed = true;
    after_connecting();
  }
  if (m_state == State::ready || m_state == State::closing) step_session(now);
  if (m_state == State::failed) destroy_session();
}

std::optional<Clock::time_point> SshConnection::deadline() const {
  if (m_state == State::failed || m_state == State::closed) return std::nullopt;
  if (m_progressed) return m_now;
  if (m_connector) return m_connector->deadline();
  switch (m_phase) {
    case Phase::disconnect:
      return m_disconnect_deadline;
    case Phase::done:
      return std::nullopt;
    case Phase::connecting:
    case Phase::ready:
      break;
  }
  std::optional<Clock::time_point> next;
  auto consider = [&](Clock::time_point at) {
    if (!next || at < *next) next = at;
  };
  if (std::optional<Clock::time_point> reopen = m_pool.reopen_at(m_now)) consider(*reopen);
  auto interval = m_target.options.keepalive_interval;
  if (interval.count() > 0 && m_busy_since != Clock::time_point{}) {
    Clock::time_point since = std::max(m_inbound.last_inbound, m_busy_since);
    consider(since + interval * (m_target.options.keepalive_count_max + 1));
    consider(std::max(since + interval, m_last_keepalive + interval));
  }
  return next;
}

bool SshConnection::accepts_work(Clock::time_point now) const {
  return m_state == State::ready && m_pool.accepts_work(now);
}

int SshConnection::load() const { return m_pool.load(); }

void SshConnection::add_work(ChannelWork work) {
  m_pool.add(std::move(work));
  m_progressed = true;
}

std::vector<ChannelWork> SshConnection::take_returned() { return m_pool.take_returned(); }

bool SshConnection::signal_task(TaskId job, int signal) {
  return m_exec_channels.signal_job(job, signal);
}

bool SshConnection::has_jobs() const { return m_pool.has_jobs(); }

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
  m_pool.clear_waiting();
  m_phase = Phase::done;
  if (m_state != State::failed) m_state = State::closed;
}

void SshConnection::drop(const std::string& reason) {
  lose(reason);
  destroy_session();
}

std::vector<TaskId> SshConnection::lost_jobs() const { return m_pool.lost_jobs(); }

std::vector<ChannelWork> SshConnection::take_unstarted() { return m_pool.take_unstarted(); }

void SshConnection::fail(ErrorKind kind, const std::string& message) {
  debug_log::step("{}", message);
  m_state = State::failed;
  m_error = {kind, message};
  m_phase = Phase::done;
  m_pool.keep_unstarted();
}

void SshConnection::lose(const std::string& reason) {
  if (m_state == State::failed) return;
  debug_log::step("{}: connection lost: {}", m_display, reason);
  m_pool.lose_channels();
  fail(ErrorKind::disconnected, fmt::format("{}: connection lost: {}", m_display, reason));
}

void SshConnection::destroy_session() {
  if (m_connector) {
    // Given up while connecting: what it set up goes with it.
    m_display = m_connector->display();
    m_connector.reset();
  }
  m_pool.forget_blocked();
  // Freeing the session closes its channels.
  free_session(m_session, m_fd);
  m_pool.drop_channels();
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
  m_proxy.reset();
}

}  // namespace runner::ssh
