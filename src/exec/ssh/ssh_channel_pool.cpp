// A ready SSH connection's session and its pool of channels: how much work
// it takes (sshd's MaxSessions, learnt from refusals), channels opened one
// at a time (each open waits for the server's answer), the order in which
// channels are stepped (a half-sent request first), keepalives, and the
// polite disconnect. What a channel carries is ssh_exec_channel.cpp,
// ssh_launcher_channel.cpp or ssh_jump_tunnel.cpp. Threading: none.
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

constexpr auto k_refusal_pause = std::chrono::milliseconds(20);
// sshd frees a session slot only after a loop iteration that follows our
// channel close; an open that arrives with the close may still be refused.
constexpr auto k_close_settling = std::chrono::milliseconds(200);
constexpr auto k_disconnect_grace = std::chrono::seconds(2);

}  // namespace

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
    return channel->is_launcher() && channel->idle() && channel->step != Channel::Step::run;
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
  if (m_inbound.socket_errno != 0) return lowercase_first(std::strerror(m_inbound.socket_errno));
  if (m_inbound.peer_closed) return "the server closed the connection";
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

  if (m_inbound.peer_closed || m_inbound.socket_errno != 0) {
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
    if (m_opening->work.kind == ChannelWork::Kind::tunnel) {
      m_opening->per_kind.emplace<TunnelChannel>();
    } else {
      m_opening->exec().launcher =
          m_opening->work.kind == ChannelWork::Kind::job && m_opening->work.input.empty() &&
          !m_hints.no_launcher;
    }
    if (!m_round_trip) m_open_started = m_now;
  }
  if (m_opening->work.kind == ChannelWork::Kind::tunnel) return open_tunnel_channel();
  LIBSSH2_CHANNEL* handle = libssh2_channel_open_session(m_session);
  if (handle) {
    debug_log::detail("{}: channel opened for {}, {} open", m_display,
                      m_opening->work.kind == ChannelWork::Kind::job
                          ? (m_opening->exec().launcher ? "a launcher" : "a job")
                          : "runner's own command",
                      m_channels.size() + 1);
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
  if (!m_limit || open_now < *m_limit) m_limit = open_now;
  if (!m_hints.channel_limit || *m_limit < *m_hints.channel_limit) m_hints.channel_limit = m_limit;
  if (refused->work.kind != ChannelWork::Kind::pump && !refused->silent) {
    m_returned.push_back(std::move(refused->work));
  }
  return_waiting_work();
  return Outcome::finished;
}

SshConnection::Outcome SshConnection::step_channel(Channel& channel) {
  // The kind's own steps first; every kind ends with the same close.
  Outcome outcome = channel.is_tunnel() ? step_tunnel(channel) : step_exec(channel);
  if (outcome != Outcome::progressed) return outcome;
  return step_ending(channel);
}

SshConnection::Outcome SshConnection::step_ending(Channel& channel) {
  using Step = Channel::Step;
  if (channel.step == Step::close) {
    Outcome outcome = classify(libssh2_channel_close(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.step = Step::wait_closed;
  }
  if (channel.step == Step::wait_closed) {
    Outcome outcome = classify(libssh2_channel_wait_closed(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    finish_channel(channel);
    channel.step = Step::release;
  }
  if (channel.step == Step::release) {
    Outcome outcome = classify(libssh2_channel_free(channel.handle), &channel);
    if (outcome != Outcome::progressed) return outcome;
    channel.handle = nullptr;
    m_last_close = m_now;
    return Outcome::finished;
  }
  return Outcome::blocked;
}

void SshConnection::keepalive(Clock::time_point now) {
  auto interval = m_target.options.keepalive_interval;
  bool busy = !m_channels.empty() || m_opening;
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
