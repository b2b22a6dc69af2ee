// A shared connection to a jump host and the tunnels it carries to the
// hosts behind it. Threading: none.
#include "ssh_jump.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace runner::ssh {

JumpLink::JumpLink(const HostTarget& hop, std::shared_ptr<JumpLink> previous)
    : m_target(hop), m_previous(std::move(previous)) {}

JumpLink::~JumpLink() {
  if (m_connection) m_connection->abandon();
}

std::string JumpLink::route_name() const {
  if (!m_previous) return m_target.name;
  return m_previous->route_name() + ", " + m_target.name;
}

std::shared_ptr<Tunnel> JumpLink::open_tunnel(const std::string& host, int port,
                                              Clock::time_point now) {
  auto tunnel = std::make_shared<Tunnel>();
  tunnel->host = host;
  tunnel->port = port;
  if (m_failed) {
    fail_tunnel(*tunnel, m_connection ? m_connection->error() : Status{});
    return tunnel;
  }
  m_waiting.push_back(tunnel);
  if (!m_connection) {
    m_connection = std::make_unique<SshConnection>(m_target, m_hints, m_no_jobs, m_previous);
    m_connection->start(now);
  }
  settle();
  return tunnel;
}

void JumpLink::poll_fds(std::vector<pollfd>& out) const {
  if (m_previous) m_previous->poll_fds(out);
  if (m_connection) m_connection->poll_fds(out);
}

void JumpLink::step(Clock::time_point now) {
  if (m_stepped_at == now) return;
  m_stepped_at = now;
  if (m_previous) m_previous->step(now);
  if (!m_connection) return;
  m_connection->step(now);
  settle();
}

std::optional<Clock::time_point> JumpLink::deadline() const {
  std::optional<Clock::time_point> next = m_previous ? m_previous->deadline() : std::nullopt;
  if (m_connection) {
    std::optional<Clock::time_point> own = m_connection->deadline();
    if (own && (!next || *own < *next)) next = own;
  }
  return next;
}

void JumpLink::settle() {
  if (!m_connection) return;
  SshConnection::State state = m_connection->state();
  if (state == SshConnection::State::ready) {
    for (ChannelWork& work : m_connection->take_returned()) {
      if (work.kind == ChannelWork::Kind::tunnel) m_waiting.push_back(work.tunnel);
    }
    for (std::weak_ptr<Tunnel>& waiting : std::exchange(m_waiting, {})) {
      if (waiting.expired()) continue;
      ChannelWork work;
      work.kind = ChannelWork::Kind::tunnel;
      work.tunnel = waiting;
      m_connection->add_work(std::move(work));
    }
    return;
  }
  if (state != SshConnection::State::failed && state != SshConnection::State::closed) return;
  m_failed = true;
  Status error = m_connection->error();
  for (ChannelWork& work : m_connection->take_unstarted()) {
    if (work.kind == ChannelWork::Kind::tunnel) m_waiting.push_back(work.tunnel);
  }
  for (std::weak_ptr<Tunnel>& waiting : std::exchange(m_waiting, {})) {
    if (std::shared_ptr<Tunnel> tunnel = waiting.lock()) fail_tunnel(*tunnel, error);
  }
}

void JumpLink::fail_tunnel(Tunnel& tunnel, const Status& error) {
  tunnel.state = Tunnel::State::failed;
  // No reason known: the jump host's connection closed without one.
  tunnel.error = error.message().empty()
                     ? Status(ErrorKind::connect, fmt::format("{}: the connection to the jump "
                                                              "host ended",
                                                              m_target.name))
                     : error;
}

}  // namespace runner::ssh
