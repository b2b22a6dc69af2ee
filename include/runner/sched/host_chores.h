// The runner's own work on hosts around jobs, for the scheduler and its
// components, and what it does with the answers: a job's outputs brought
// back (and removed from its host with `outputs_cleanup:`), a multi-node
// job's hostfile removed (Gangs), a service's leftovers killed and its
// `after:` command run (Services), a job's `cancel:` command, the looks at
// GPUs that GpuGates asks for and the readiness probes Services asks for.
// The run does not end while any of the first three is under way (busy()).
#pragma once

#include <functional>

#include "runner/config/hosts.h"
#include "runner/sched/gangs.h"
#include "runner/sched/gpu_gates.h"
#include "runner/sched/hosts.h"
#include "runner/sched/job.h"
#include "runner/sched/run_observer.h"
#include "runner/sched/scheduler_options.h"
#include "runner/sched/services.h"
#include "runner/state/run_log.h"

namespace runner {

class HostChores {
 public:
  // `changed`: an answer may let a job be taken (a GPU found free, a
  // service ready).
  HostChores(const Fleet& fleet, Hosts& hosts, const SchedulerOptions& options, Services& services,
             GpuGates& gpu_gates, RunLog& run_log, RunObserver& observer,
             std::function<void()> changed);

  // Brings back the files the ended job's `outputs:` name from each of its
  // tasks' hosts into the run's outputs folder, a folder of its own for
  // each attempt (also when it failed: the logs of a failed run matter).
  void collect_outputs(const Job& job);
  void remove_hostfile(const HostfileRemoval& removal);
  // What is left of a service once it ended: kills what outlived its shell,
  // then runs its `after:` command.
  void clean_up_after(ServiceCleanup cleanup);
  void run_cancel_command(const Job& job, const Task& task);
  // Starts the looks GpuGates finds due (`wanted`: jobs wait for slots).
  void look_at_gpus(bool wanted, Clock::time_point now);
  // Kills the looks GpuGates gave up on (overdue).
  void give_up_gpu_looks(Clock::time_point now);
  // A readiness probe of a service (run its command, or look for its port).
  void probe(const ReadinessStep& step);

  bool busy() const { return m_under_way > 0; }

 private:
  void run_after_command(ServiceCleanup cleanup);

  const Fleet& m_fleet;
  Hosts& m_hosts;
  const SchedulerOptions& m_options;
  Services& m_services;
  GpuGates& m_gpu_gates;
  RunLog& m_run_log;
  RunObserver& m_observer;
  std::function<void()> m_changed;
  int m_under_way = 0;  // fetches, `after:` commands and removals not yet ended
};

}  // namespace runner
