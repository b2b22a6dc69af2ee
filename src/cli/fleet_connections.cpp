// See fleet_connections.h.
#include "fleet_connections.h"

#include <algorithm>

#include "runner/exec/backend.h"

namespace runner {

FleetConnections::FleetConnections(const Fleet& fleet, std::shared_ptr<SshContext> ssh,
                                   ExecutorEvents& events)
    : m_executors(FleetBackend(fleet, std::move(ssh)).executors(events)) {
  for (auto& executor : m_executors) m_loop.add(executor.get());
}

std::vector<Executor*> FleetConnections::executors() const {
  std::vector<Executor*> executors;
  for (const auto& executor : m_executors) executors.push_back(executor.get());
  return executors;
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
