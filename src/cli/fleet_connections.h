// The connections of a command that checks hosts (`runner check` and
// `runner check --net`): one executor per host of the fleet, with its
// typed operations (HostOps), in one event loop, and their orderly close. Threading: none.
#pragma once

#include <memory>
#include <vector>

#include "fatal.h"
#include "runner/config/hosts.h"
#include "runner/core/clock.h"
#include "runner/exec/event_loop.h"
#include "runner/exec/executor.h"
#include "runner/exec/host_ops.h"

namespace runner {

class SshContext;

class FleetConnections {
 public:
  FleetConnections(const Fleet& fleet, std::shared_ptr<SshContext> ssh, ExecutorEvents& events);

  // In the fleet's order.
  std::vector<Executor*> executors() const;
  std::vector<HostOps*> host_ops() const;
  // Starts connecting to every host.
  void connect();
  void run_once(Clock::duration max_wait) { fatal_unless(m_loop.run_once(max_wait)); }
  // Shuts every executor down and runs the loop until all are idle, two
  // seconds at most.
  void close();

 private:
  std::vector<std::unique_ptr<Executor>> m_executors;
  std::vector<std::unique_ptr<HostOps>> m_host_ops;  // one per executor, built on it
  EventLoop m_loop;
};

}  // namespace runner
