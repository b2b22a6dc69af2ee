// See fleet_connections.h.
#include "fleet_connections.h"

#include <algorithm>

#include "runner/exec/backend.h"
#include "runner/exec/shell_host_ops.h"

namespace runner {

FleetConnections::FleetConnections(const Fleet& fleet, std::shared_ptr<SshContext> ssh,
                                   ExecutorEvents& events)
    : m_executors(FleetBackend(fleet, std::move(ssh)).executors(events)) {
  for (auto& executor : m_executors) {
    m_host_ops.push_back(std::make_unique<ShellHostOps>(*executor));
    m_loop.add(executor.get());
    m_loop.add(m_host_ops.back().get());
  }
}

std::vector<Executor*> FleetConnections::executors() const {
  std::vector<Executor*> executors;
  for (const auto& executor : m_executors) executors.push_back(executor.get());
  return executors;
}

std::vector<HostOps*> FleetConnections::host_ops() const {
  std::vector<HostOps*> host_ops;
  for (const auto& ops : m_host_ops) host_ops.push_back(ops.get());
  return host_ops;
}

void FleetConnections::connect() {
  for (auto& executor : m_executors) executor->connect();
}

void FleetConnections::close() {
  for (auto& executor : m_executors) executor->shutdown();
  Clock::time_point closing = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < closing && !std::all_of(m_executors.begin(), m_executors.end(),
                                                [](auto& e) { return e->idle(); })) {
    fatal_unless(m_loop.run_once(std::chrono::milliseconds(100)));
  }
}

}  // namespace runner
