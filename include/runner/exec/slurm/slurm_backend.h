// The backend of a run inside a Slurm allocation: its fleet comes from the
// allocation (slurm_allocation.h), and every task runs in a step of its own,
// started by a local `srun --overlap --jobid=<job> -w <node> -N1 -n1` whose
// process is the task's handle. A signal reaches the step through
// `scancel --signal` (srun itself answers SIGTERM by killing the step, and
// dies of SIGKILL leaving the step running).
#pragma once

#include "runner/exec/backend.h"
#include "runner/exec/slurm/slurm_allocation.h"

namespace runner {

class SlurmBackend final : public Backend {
 public:
  // `fleet` (slurm_fleet's, with parameters a caller may add) must outlive
  // the backend.
  SlurmBackend(SlurmAllocation allocation, const Fleet& fleet)
      : m_allocation(std::move(allocation)), m_fleet(fleet) {}

  const Fleet& fleet() const override { return m_fleet; }
  std::vector<std::unique_ptr<Executor>> executors(ExecutorEvents& events) override;

 private:
  SlurmAllocation m_allocation;
  const Fleet& m_fleet;
};

}  // namespace runner
