// Tunnel channels (see ssh_jump_tunnel.h), and the bridge end each keeps.
// Threading: none.
#include "ssh_jump_tunnel.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace runner::ssh {

TunnelChannel::~TunnelChannel() {
  if (bridge_fd >= 0) ::close(bridge_fd);
}

void TunnelChannel::poll_fds(std::vector<pollfd>& out) const {
  if (bridge_fd < 0) return;
  short events = 0;
  if (to_remote.empty() && !local_eof) events |= POLLIN;
  if (!to_local.empty()) events |= POLLOUT;
  if (events) out.push_back(pollfd{bridge_fd, events, 0});
}

Outcome JumpTunnels::open() {
  Channel& opening = *m_pool.opening();
  TunnelChannel& bridge = opening.tunnel();
  if (!bridge.tunnel) {
    bridge.tunnel = opening.work.tunnel.lock();
    if (!bridge.tunnel) {
      // The next host's connection gave up before its tunnel was asked for.
      m_pool.drop_opening();
      m_context.note_progress();
      return Outcome::progressed;
    }
  }
  Tunnel& tunnel = *bridge.tunnel;
  LIBSSH2_CHANNEL* handle = libssh2_channel_direct_tcpip_ex(
      m_context.session(), tunnel.host.c_str(), tunnel.port, "127.0.0.1", 22);
  if (handle) return m_context.opened(opening, handle);
  int rc = libssh2_session_last_errno(m_context.session());
  if (rc == LIBSSH2_ERROR_EAGAIN || is_session_error(rc)) return m_context.classify(rc, nullptr);
  std::string why = last_error(m_context.session());
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
  tunnel.error = {ErrorKind::connect,
                  fmt::format("{} refused a tunnel to {}:{} ({}){}", m_context.display(),
                              tunnel.host, tunnel.port, why, hint)};
  m_pool.drop_opening();
  m_context.note_progress();
  return Outcome::progressed;
}

Outcome JumpTunnels::start_bridge(Channel& channel) {
  TunnelChannel& bridge = channel.tunnel();
  std::shared_ptr<Tunnel> tunnel = std::move(bridge.tunnel);
  m_context.note_progress();
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
                     fmt::format("{}: cannot make a socket pair for a tunnel: {}",
                                 m_context.display(), std::strerror(errno))};
    channel.silent = true;
    channel.step = Channel::Step::close;
    return Outcome::progressed;
  }
  tunnel->fd = pair[0];
  tunnel->state = Tunnel::State::open;
  bridge.bridge_fd = pair[1];
  channel.exec_attempted = true;
  channel.step = Channel::Step::bridge;
  return Outcome::progressed;
}

Outcome JumpTunnels::pump_tunnel(Channel& channel, bool& done) {
  TunnelChannel& bridge = channel.tunnel();
  done = false;
  char buffer[32 * 1024];
  // Towards the next host: what came through the channel.
  while (true) {
    if (!bridge.to_local.empty()) {
      ssize_t sent = ::send(bridge.bridge_fd, bridge.to_local.data(), bridge.to_local.size(),
                            MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent > 0) {
        bridge.to_local.erase(0, static_cast<size_t>(sent));
        m_context.note_progress();
        continue;
      }
      if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
      done = true;  // the next host's connection is gone
      return Outcome::progressed;
    }
    ssize_t got = libssh2_channel_read(channel.handle, buffer, sizeof buffer);
    if (got > 0) {
      bridge.to_local.assign(buffer, static_cast<size_t>(got));
      m_context.note_progress();
      continue;
    }
    if (got == 0) break;
    Outcome outcome = m_context.classify(static_cast<int>(got), &channel);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    break;
  }
  if (bridge.to_local.empty() && libssh2_channel_eof(channel.handle)) {
    done = true;  // the far end closed
    return Outcome::progressed;
  }
  // Towards the jump host: what the next host's connection wrote.
  while (true) {
    if (!bridge.to_remote.empty()) {
      ssize_t written =
          libssh2_channel_write(channel.handle, bridge.to_remote.data(), bridge.to_remote.size());
      if (written > 0) {
        bridge.to_remote.erase(0, static_cast<size_t>(written));
        m_context.note_progress();
        continue;
      }
      if (written == 0) break;
      Outcome outcome = m_context.classify(static_cast<int>(written), &channel);
      if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
      break;
    }
    if (bridge.local_eof) {
      done = true;
      return Outcome::progressed;
    }
    ssize_t got = ::recv(bridge.bridge_fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0) {
      bridge.to_remote.assign(buffer, static_cast<size_t>(got));
      m_context.note_progress();
      continue;
    }
    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      bridge.local_eof = true;
      m_context.note_progress();
      continue;
    }
    break;
  }
  return Outcome::blocked;
}

Outcome JumpTunnels::step(Channel& channel) {
  TunnelChannel& bridge = channel.tunnel();
  using Step = Channel::Step;
  if (channel.step == Step::exec) start_bridge(channel);
  if (channel.step == Step::bridge) {
    bool done = false;
    Outcome outcome = pump_tunnel(channel, done);
    if (outcome == Outcome::broken || m_pool.blocked_on(channel)) return outcome;
    if (!done) return Outcome::blocked;
    ::close(bridge.bridge_fd);
    bridge.bridge_fd = -1;
    channel.step = Step::close;
    m_context.note_progress();
  }
  return Outcome::progressed;
}

}  // namespace runner::ssh
