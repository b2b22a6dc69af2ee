// See host_round.h.
#include "runner/cli/host_round.h"

#include "fleet_connections.h"

namespace runner {

void HostRound::run(const Fleet& fleet, std::shared_ptr<SshContext> ssh,
                    std::optional<Clock::time_point> deadline) {
  m_done.assign(fleet.hosts.size(), false);
  m_began.assign(fleet.hosts.size(), false);
  m_left = fleet.hosts.size();
  FleetConnections connections(fleet, std::move(ssh), *this);
  m_executors = connections.executors();
  m_host_ops = connections.host_ops();
  connections.connect();
  while (m_left > 0) {
    if (deadline && Clock::now() >= *deadline) {
      for (std::size_t host = 0; host < m_done.size(); ++host) {
        if (m_done[host]) continue;
        failed(static_cast<int>(host), m_began[host]
                                           ? "connected, but " + m_work + " did not finish in time"
                                           : "no answer in time");
        done(static_cast<int>(host));
      }
      break;
    }
    connections.run_once(std::chrono::milliseconds(200));
  }
  connections.close();
}

void HostRound::host_ready(int host) {
  m_began[host] = true;
  begin(host, *m_executors[host]);
}

void HostRound::host_failed(int host, const Status& error) {
  if (m_done[host]) return;
  failed(host, error.message());
  done(host);
}

bool HostRound::done(int host) {
  if (m_done[host]) return false;
  m_done[host] = true;
  --m_left;
  return true;
}

}  // namespace runner
