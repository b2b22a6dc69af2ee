#include "runner/exec/backend.h"
#include "runner/exec/local_transport.h"
#include "runner/exec/ssh_transport.h"

namespace runner {

std::vector<std::unique_ptr<HostTransport>> FleetBackend::executors(TransportEvents& events) {
  std::vector<std::unique_ptr<HostTransport>> executors;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h) {
    const HostAddress& address = m_fleet.hosts[h].address;
    int index = static_cast<int>(h);
    executors.push_back(address.local ? make_local_transport(index, events)
                                      : make_ssh_transport(index, address, m_ssh, events));
  }
  return executors;
}

}  // namespace runner
