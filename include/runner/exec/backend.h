// Where jobs run: the hosts and slots a run may use, and one executor (an
// Executor) for each host, with its typed operations (HostOps). The
// scheduler asks its backend for them and knows nothing of how a host is
// reached. Today the fleet of hosts.yaml, each host over SSH or as local
// processes (FleetBackend); a Slurm allocation is another backend.
#pragma once

#include <memory>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/exec/executor.h"
#include "runner/exec/host_ops.h"

namespace runner {

class SshContext;

class Backend {
 public:
  virtual ~Backend() = default;
  // The hosts and their slots.
  virtual const Fleet& fleet() const = 0;
  // One executor per host of fleet(), in its order, reporting to `events`.
  virtual std::vector<std::unique_ptr<Executor>> executors(ExecutorEvents& events) = 0;
  // The typed operations on the host of `executor` (one of executors()),
  // built on it; by default the shell's (ShellHostOps).
  virtual std::unique_ptr<HostOps> host_ops(Executor& executor);
};

// The hosts of hosts.yaml: `localhost` (and loopback names) as local
// processes, every other host over SSH, sharing `ssh`. `fleet` must outlive
// the backend.
class FleetBackend final : public Backend {
 public:
  FleetBackend(const Fleet& fleet, std::shared_ptr<SshContext> ssh)
      : m_fleet(fleet), m_ssh(std::move(ssh)) {}

  const Fleet& fleet() const override { return m_fleet; }
  std::vector<std::unique_ptr<Executor>> executors(ExecutorEvents& events) override;

 private:
  const Fleet& m_fleet;
  std::shared_ptr<SshContext> m_ssh;
};

}  // namespace runner
