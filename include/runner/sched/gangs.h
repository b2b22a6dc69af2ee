// Jobs that span hosts (`nodes: N`) between their placement and their end:
// a job is staged while rank 0's host says which ports are in use and which
// addresses it has; then its layout is made (each rank's address, a master
// port free on rank 0's host and not given to another job running there,
// a hostfile of its own launch); once it ended, its hostfile is removed
// where its ranks ran. This holds the staged jobs, the launches counted
// and the master ports given; the scheduler holds their slots, asks the
// host, launches the jobs and removes the files. Reads only how the
// executors reach their hosts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/multi_node.h"
#include "runner/exec/executor.h"
#include "runner/exec/host_ops.h"
#include "runner/sched/job.h"

namespace runner {

// A staged job whose master port is chosen: to launch on `placement`, its
// layout set, once `warnings` are said.
struct GangReady {
  Job job;
  Placement placement;
  std::vector<std::string> warnings;
};

// A staged job whose rank 0's host was lost before it answered: nothing
// ran; the job, Queued again as it was, goes back to the queue's head and
// `placement`'s slots are free again.
struct GangHostLost {
  Job job;
  Placement placement;
};

// Where an ended job's hostfile is to be removed: the hosts where a rank
// ran and ended (a lost one's host is gone, or will be cleaned).
struct HostfileRemoval {
  JobId job = 0;
  std::string path;
  std::set<int> hosts;
};

class Gangs {
 public:
  // `executors`, one per host of `fleet`, say how other hosts reach theirs;
  // `run_id` names the hostfiles.
  Gangs(const Fleet& fleet, const std::vector<std::unique_ptr<Executor>>& executors,
        std::string run_id)
      : m_fleet(fleet), m_executors(executors), m_run_id(std::move(run_id)) {}

  // `job` waits on `placement` (its slots held) for the look at rank 0's
  // host, which is returned.
  int stage(Job job, Placement placement);
  // A job waits for that look.
  bool staging() const { return !m_staging.empty(); }
  // The look at job `id`'s rank 0 host ended with `survey`: the job leaves
  // staging, ready or put back; nullopt if `id` is not staged.
  std::optional<std::variant<GangReady, GangHostLost>> staged(JobId id,
                                                              const Result<NetworkSurvey>& survey);

  // The layout a job on `placement` would have, to see that its commands
  // render before its master port is chosen (port 0).
  NodeLayout provisional_layout(const Placement& placement) const;

  // `job` (staged, running, or never launched) is over: its master port may
  // be given again, and its hostfile is removed from where it ran (no hosts
  // for a job of one host).
  [[nodiscard]] HostfileRemoval ended(const Job& job);

 private:
  // `launch` numbers the multi-node launches of the run: each has a
  // hostfile of its own, so that a job launched again never meets the
  // removal of its last launch's.
  NodeLayout layout_for(JobId id, std::uint64_t launch, const Placement& placement, int port) const;
  // Rank 0 on a loopback address while other nodes are elsewhere: they
  // reach it by the first of its host's own addresses; a warning if it has
  // none.
  static std::optional<std::string> reach_master_from_elsewhere(
      NodeLayout& layout, const std::vector<std::string>& master_addresses);
  // Ports given to the jobs whose rank 0 runs on `host`.
  std::set<int> master_ports_on(int host) const;

  const Fleet& m_fleet;
  const std::vector<std::unique_ptr<Executor>>& m_executors;
  std::string m_run_id;
  std::map<JobId, Job> m_staging;                       // waiting for their master port
  std::map<JobId, std::pair<int, int>> m_master_ports;  // rank 0's host and port, by job
  std::uint64_t m_launches = 0;
};

}  // namespace runner
