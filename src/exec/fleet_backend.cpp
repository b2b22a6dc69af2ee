#include "runner/exec/backend.h"
#include "runner/exec/local_executor.h"
#include "runner/exec/shell_host_ops.h"
#include "runner/exec/ssh/ssh_executor.h"

namespace runner {

std::unique_ptr<HostOps> Backend::host_ops(Executor& executor) {
  return std::make_unique<ShellHostOps>(executor);
}

std::vector<std::unique_ptr<Executor>> FleetBackend::executors(ExecutorEvents& events) {
  std::vector<std::unique_ptr<Executor>> executors;
  for (std::size_t h = 0; h < m_fleet.hosts.size(); ++h) {
    const HostAddress& address = m_fleet.hosts[h].address;
    int index = static_cast<int>(h);
    executors.push_back(address.local ? make_local_executor(index, events)
                                      : make_ssh_executor(index, address, m_ssh, events));
  }
  return executors;
}

}  // namespace runner
