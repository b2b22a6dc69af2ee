// A ready SSH connection's session and its channels: channels opened one
// at a time (each open waits for the server's answer; a refusal teaches
// sshd's MaxSessions), the order in which channels are stepped (a half-sent
// request first), keepalives, and the polite disconnect. Which work goes
// where is its ChannelPool's (ssh_channel_pool.cpp); what a channel carries
// is its kind's: ExecChannels, Launchers or JumpTunnels (ssh_exec_channel.cpp,
// ssh_launcher_channel.cpp, ssh_jump_tunnel.cpp).
// Threading: none.
#include <fmt/format.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runner/core/debug_log.h"
#include "ssh_connection.h"

namespace runner::ssh {

namespace {

constexpr auto k_disconnect_grace = std::chrono::seconds(2);

}  // namespace

bool SshConnection::blocked_outbound() const {
  return m_session &&
         (libssh2_session_block_directions(m_session) & LIBSSH2_SESSION_BLOCK_OUTBOUND);
}

Outcome SshConnection::classify(int rc, Channel* channel) {
  if (rc == LIBSSH2_ERROR_EAGAIN || rc == LIBSSH2_ERROR_BAD_USE) {
    // A request that is half sent must be completed by the same call before
    // any other call may send.
    if (blocked_outbound()) m_pool.block(channel);
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
  if (blocked_outbound() || m_pool.blocked()) return false;
  int queued = 0;
  return ioctl(m_fd, SIOCOUTQ, &queued) == 0 && queued < 4096;
}

std::string SshConnection::socket_failure() const {
  if (m_inbound.socket_errno != 0) return lowercase_first(std::strerror(m_inbound.socket_errno));
  if (m_inbound.peer_closed) return "the server closed the connection";
  return last_error(m_session);
}

void SshConnection::step_session(Clock::time_point now) {
  // A half-sent request goes first.
  if (Channel* channel = m_pool.take_blocked_channel()) {
    Outcome outcome = step_channel(*channel);
    if (outcome == Outcome::broken) return;
    if (outcome == Outcome::finished) m_pool.erase(*channel);
    if (m_pool.blocked_on_channel()) return;
  }
  if (m_pool.take_blocked_open()) {
    if (step_open() == Outcome::broken) return;
    if (m_pool.blocked_open()) return;
  }

  if (m_pool.assign_to_launchers()) m_progressed = true;
  // Open channels, one at a time; each needs the server's answer.
  while (true) {
    Outcome outcome = step_open();
    if (outcome == Outcome::broken || m_pool.blocked_open()) return;
    if (outcome != Outcome::progressed) break;
  }

  // A read on one channel may queue packets for the others: step them all.
  ChannelPool::Channels& channels = m_pool.channels();
  for (size_t i = 0; i < channels.size();) {
    Outcome outcome = step_channel(*channels[i]);
    if (outcome == Outcome::broken) return;
    if (outcome == Outcome::finished) {
      channels.erase(channels.begin() + static_cast<std::ptrdiff_t>(i));
      m_progressed = true;
    } else {
      ++i;
    }
    if (m_pool.blocked_on_channel()) return;
  }

  if (m_inbound.peer_closed || m_inbound.socket_errno != 0) {
    lose(socket_failure());
    return;
  }

  keepalive(now);
  if (m_state == State::failed) return;

  bool busy = m_pool.busy();
  if (!busy && m_state == State::ready) {
    // Idle launchers are read on every step; without them, peek.
    if (channels.empty()) maybe_start_pump();
    return;
  }
  if (!busy && m_state == State::closing && !channels.empty()) {
    // Idle launchers end at EOF on their stdin.
    for (auto& channel : channels) {
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
    m_pool.add(pump);
    m_progressed = true;
  } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
    lose(lowercase_first(std::strerror(errno)));
  }
}

Outcome SshConnection::step_open() {
  if (!m_pool.opening()) {
    bool gave_back = false;
    if (!m_pool.open_next(m_now, !m_hints.no_launcher, gave_back)) {
      if (gave_back) m_progressed = true;
      return Outcome::finished;
    }
    if (!m_round_trip) m_open_started = m_now;
  }
  Channel& opening = *m_pool.opening();
  if (opening.work.kind == ChannelWork::Kind::tunnel) return m_tunnels.open();
  LIBSSH2_CHANNEL* handle = libssh2_channel_open_session(m_session);
  if (handle) {
    debug_log::detail("{}: channel opened for {}, {} open", m_display,
                      opening.work.kind == ChannelWork::Kind::job
                          ? (opening.exec().launcher ? "a launcher" : "a job")
                          : "runner's own command",
                      m_pool.channels().size() + 1);
    return opened(opening, handle);
  }
  int rc = libssh2_session_last_errno(m_session);
  if (rc == LIBSSH2_ERROR_EAGAIN) return classify(rc, nullptr);
  if (is_session_error(rc)) return classify(rc, nullptr);

  std::unique_ptr<Channel> refused = m_pool.take_opening();
  m_progressed = true;
  int open_now = static_cast<int>(m_pool.channels().size());
  bool is_job = refused->work.kind == ChannelWork::Kind::job;
  if (rc == LIBSSH2_ERROR_CHANNEL_FAILURE && m_pool.settling(m_now)) {
    // Probably the slot of a channel that just closed: try again shortly.
    m_pool.retry_shortly(m_now, refused->silent ? nullptr : &refused->work);
    return Outcome::finished;
  }
  if (rc != LIBSSH2_ERROR_CHANNEL_FAILURE || open_now == 0) {
    if (is_job && !refused->silent) {
      m_sink.task_exited(refused->work.job, JobExit::failed_because(fmt::format(
                                                "{}: the server refused a session channel: {}",
                                                m_display, last_error(m_session))));
    }
    return Outcome::progressed;
  }
  // sshd's MaxSessions: remember this connection's limit and hand the work
  // back, so that the pool places it on another connection.
  debug_log::step("{}: the server refused channel {} ({}): taking its MaxSessions as {}",
                  m_display, open_now + 1, last_error(m_session), open_now);
  std::optional<int> limit = m_pool.learn_limit(open_now);
  if (!m_hints.channel_limit || *limit < *m_hints.channel_limit) m_hints.channel_limit = limit;
  if (refused->work.kind != ChannelWork::Kind::pump && !refused->silent) {
    m_pool.give_back(std::move(refused->work));
  }
  if (m_pool.return_waiting()) m_progressed = true;
  return Outcome::finished;
}

Outcome SshConnection::opened(Channel& opening, LIBSSH2_CHANNEL* handle) {
  opening.handle = handle;
  m_pool.opened();
  m_progressed = true;
  if (!m_round_trip) m_round_trip = m_now - m_open_started;
  return Outcome::progressed;
}

Outcome SshConnection::step_channel(Channel& channel) {
  // The kind's own steps first; every kind ends with the same close.
  Outcome outcome;
  if (channel.is_tunnel()) {
    outcome = m_tunnels.step(channel);
  } else {
    // A launcher's own steps; once retired, it ends as an exec channel.
    if (Launchers::at_own_step(channel)) {
      outcome = m_launchers.step(channel);
      if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
      if (Launchers::at_own_step(channel)) return Outcome::blocked;
    }
    outcome = m_exec_channels.step(channel);
  }
  if (outcome != Outcome::progressed) return outcome;
  return step_ending(channel);
}

Outcome SshConnection::step_ending(Channel& channel) {
  using Step = Channel::Step;
  if (channel.step == Step::close) {
    Outcome outcome = classify(libssh2_channel_close(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::wait_closed;
  }
  if (channel.step == Step::wait_closed) {
    Outcome outcome = classify(libssh2_channel_wait_closed(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    if (channel.is_launcher()) {
      m_launchers.closed(channel);
    } else {
      m_exec_channels.finish(channel);
    }
    channel.step = Step::release;
  }
  if (channel.step == Step::release) {
    Outcome outcome = classify(libssh2_channel_free(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.handle = nullptr;
    m_pool.closed(m_now);
    return Outcome::finished;
  }
  return Outcome::blocked;
}

void SshConnection::keepalive(Clock::time_point now) {
  auto interval = m_target.options.keepalive_interval;
  bool busy = !m_pool.channels().empty() || m_pool.opening();
  if (!busy || interval.count() <= 0) {
    m_busy_since = {};
    return;
  }
  if (m_busy_since == Clock::time_point{}) m_busy_since = now;
  Clock::time_point since = std::max(m_inbound.last_inbound, m_busy_since);
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

}  // namespace runner::ssh
