// Private to cli: the fleet a `queue` or `broadcast` run uses: hosts.yaml's,
// or with --slurm the allocation the runner is inside.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runner/cli/options.h"
#include "runner/exec/backend.h"
#include "runner/exec/slurm/slurm_allocation.h"

namespace runner {

struct RunFleet {
  Fleet fleet;
  std::optional<SlurmAllocation> allocation;  // with --slurm
};

// Throws ConfigError when the file or the allocation cannot be read; warns
// of repeated slots of hosts.yaml.
RunFleet load_run_fleet(const RunOptions& options,
                        const std::function<void(const std::string&)>& warn);

// What runs the jobs on `fleet` (which must outlive it): Slurm steps with
// --slurm, else hosts over SSH or local processes sharing `ssh`.
std::unique_ptr<Backend> make_run_backend(const RunFleet& fleet, std::shared_ptr<SshContext> ssh);

// "Slurm job 12: n1 (gpu=0, gpu=1), n2 (gpu=0, gpu=1)": what --slurm found.
std::string describe_slurm_fleet(const RunFleet& fleet);

}  // namespace runner
