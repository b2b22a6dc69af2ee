// The hosts of a run as the scheduler uses them: one executor each (and the
// typed operations on it, HostOps), where
// each is in its life (HostTable), and what happens when one comes and
// goes. A host that is ready opens its slots once what lost and orphaned
// jobs left there is killed; one that failed is connected again with
// jittered exponential backoff, or given up; one where a job could not
// start is set aside for the rest of the run; when the allocation of them
// all ends (ErrorKind::ended), none takes anything again. What this decides
// is journaled and shown; the jobs it hands back (orphans to run again) and
// the changes of open slots go to the scheduler through Callbacks.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/exec/backend.h"
#include "runner/sched/host_table.h"
#include "runner/sched/run_observer.h"
#include "runner/sched/scheduler_options.h"
#include "runner/state/run_log.h"

namespace runner {

// What became of a host that failed.
enum class HostLoss {
  reconnecting,       // it is connected again later
  given_up,           // it takes nothing again in this run
  ignored,            // set aside already, or the allocation ends already
  allocation_ending,  // every host's allocation is ending: no job starts again
};

class Hosts {
 public:
  struct Callbacks {
    // An orphan of an earlier run, checked on its host (or not checkable),
    // to run again.
    std::function<void(OrphanJob)> rerun;
    // A host's slots opened or closed: the queue is to be looked at again.
    std::function<void()> changed;
  };

  // One executor per host of `backend`'s fleet, reporting to `events`.
  Hosts(Backend& backend, ExecutorEvents& events, const SchedulerOptions& options,
        RunLog& run_log, RunObserver& observer, Callbacks callbacks);

  const HostTable& table() const { return m_table; }
  const std::vector<std::unique_ptr<Executor>>& executors() const { return m_executors; }
  Executor& executor(int host) { return *m_executors[host]; }
  const std::vector<std::unique_ptr<HostOps>>& ops() const { return m_ops; }
  HostOps& ops(int host) { return *m_ops[host]; }

  void connect_all();
  // Jobs of a dead run: those whose process group is known wait on their
  // host to be checked (and their leftovers killed); the others run again.
  void adopt_orphans(std::vector<OrphanJob> orphans);
  // ExecutorEvents: the host is connected, or failed.
  void ready(int host);
  HostLoss failed(int host, const Status& error, bool stopping);
  // The allocation of every host is ending (ErrorKind::ended was said).
  bool allocation_ending() const { return m_allocation_ending; }

  // A job's task was lost there with its process group `group`: the group
  // is killed before the host's slots are used again (unless keep_orphans).
  void job_lost(int host, const ProcessGroup& group);
  // A job's process could not start there (`reason`): the host is set
  // aside in the next set_aside_refusing().
  void job_refused(int host, const std::string& reason);

  // Timers: connects again the hosts whose wait is over.
  void reconnect_due(Clock::time_point now);
  std::optional<Clock::time_point> next_reconnect() const;
  // Kills the leftovers of jobs lost alone on hosts that are still up.
  void clean_live_hosts();
  // Sets aside the ready hosts where a job could not start.
  void set_aside_refusing_hosts();

 private:
  // Kills leftovers of lost or orphaned jobs on a host that is back, then
  // opens its slots.
  void clean(int host);
  void requeue_orphans(int host, const std::string& why);

  const Fleet& m_fleet;
  std::vector<std::unique_ptr<Executor>> m_executors;
  std::vector<std::unique_ptr<HostOps>> m_ops;  // one per executor, built on it
  const SchedulerOptions& m_options;
  RunLog& m_run_log;
  RunObserver& m_observer;
  Callbacks m_callbacks;
  HostTable m_table;
  bool m_allocation_ending = false;
};

}  // namespace runner
