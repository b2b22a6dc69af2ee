// A real Slurm cluster of this machine for tests of `runner --slurm`: its
// own munged (key and socket in the test directory), one slurmctld and
// three slurmd (nodes n1, n2, n3, all on 127.0.0.1, each on a port of its
// own; each slurmd in a mount namespace whose /etc/hosts resolves the node
// names, for what its steps run), every node with `gpus` fake GPUs (character devices like /dev/null,
// declared in gres.conf without autodetection). Client commands (salloc,
// srun, squeue, runner --slurm) reach it with SLURM_CONF from env().
// Needs root (mknod, daemons as SlurmUser root) and Debian's slurmctld,
// slurmd, slurm-client and munge; everything started is stopped by pid when
// the cluster goes away.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/small_tmpfs.h"  // setup_required()
#include "support/temp_dir.h"

namespace runner::testing {

class SlurmCluster {
 public:
  // Starts the cluster with files in `dir` and waits until sinfo shows every
  // node idle. Returns nullptr and sets `why_not` when this machine cannot
  // have it (not root, Slurm or munge not installed); throws
  // std::runtime_error with the daemons' logs when it is there but does
  // not come up.
  static std::unique_ptr<SlurmCluster> start(const TempDir& dir, std::string& why_not,
                                             int gpus = 4);

  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // SLURM_CONF for client commands, and no SLURM_* variable of an
  // allocation the test itself may run in.
  std::map<std::string, std::string> env() const;
  // `args` run as a client of this cluster (with env()).
  ProcessResult run(std::vector<std::string> args) const;
  // The id of a new allocation (`salloc --no-shell ARGS`), empty when
  // Slurm refuses it; the cluster's destructor ends it.
  std::string allocate(std::vector<std::string> args) const;
  // The steps of job `job_id` that runner started (`squeue -s`), as
  // "JOB.STEP" ids.
  std::vector<std::string> runner_steps(const std::string& job_id) const;
  // The daemons' logs, for a failing test's message.
  std::string logs() const;

  static constexpr int k_nodes = 3;

 private:
  explicit SlurmCluster(const TempDir& dir) : m_dir(dir) {}
  void write_config(int gpus);
  // /etc/hosts with the nodes' names added (all 127.0.0.1), for the slurmd
  // daemons, so that a job's `srun` steps resolve them as on a cluster.
  std::string write_hosts_file() const;
  pid_t launch(const std::vector<std::string>& args, const std::string& log);
  bool nodes_idle() const;

  const TempDir& m_dir;
  std::vector<pid_t> m_daemons;  // munged first, stopped last
};

}  // namespace runner::testing

// In a test body, after `auto cluster = SlurmCluster::start(dir, why_not)`:
// skips the test when this machine cannot have a Slurm cluster, but fails
// it when CI=true (tests run as root there, with scripts/setup.sh's packages).
#define RUNNER_REQUIRE_SLURM_CLUSTER(ptr, why_not)                                   \
  do {                                                                               \
    if (!(ptr)) {                                                                    \
      if (::runner::testing::setup_required()) {                                     \
        FAIL() << "no Slurm cluster (" << (why_not) << "), and CI=true requires it"; \
      }                                                                              \
      GTEST_SKIP() << "no Slurm cluster: " << (why_not);                             \
    }                                                                                \
  } while (false)
