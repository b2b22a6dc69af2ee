// The run's services (`service:`): jobs that keep their slots until the run
// ends. This holds which services run, in the order they started, what the
// ready ones gave (ready_log's variables), and whether the run's end is
// stopping them, and decides what a service's end means; the scheduler
// probes their readiness, stops them and runs their `after:` commands.
// Pure.
#pragma once

#include <optional>
#include <vector>

#include "runner/config/params.h"
#include "runner/core/clock.h"
#include "runner/sched/job.h"
#include "runner/sched/job_end.h"

namespace runner {

// What a service's end means for the run.
enum class ServiceEnd {
  restarted,  // it ended on its own with `restart: on-failure`: it runs again
  stopped,    // the runner stopped it (the run's end, `runner stop`): not a failure
  failed,     // it ended before the run did, or was not ready in time
};

class Services {
 public:
  // `job`, a service, was launched at `now`: what its readiness starts as
  // (the checks it has no need of passed, its ready_timeout from now).
  ServiceRun started(const Job& job, Clock::time_point now);
  // The running services, in the order they started.
  const std::vector<JobId>& running() const { return m_running; }
  bool any() const { return !m_running.empty(); }
  // `job` is a running service.
  bool runs(JobId job) const;

  // `service` is ready: the variables it gave are seen by the jobs after it
  // (the first service to give a name keeps it).
  void ready(const ServiceRun& service);
  const Params& variables() const { return m_variables; }

  // Every other job is done: the services are stopped, one at a time, the
  // last started first. The one to stop now; nullopt once none runs.
  std::optional<JobId> next_to_tear_down();
  // The run's end is stopping the services: no job is taken any more.
  bool tearing_down() const { return m_tearing_down; }

  // A running service `job` ended, as judge_end said in `end`: it no longer
  // runs, and `end.again` is left as the service that runs again
  // (`restarted`), or emptied; nothing restarts once the run is `stopping`.
  ServiceEnd ended(const Job& job, bool stopping, JobEnd& end);

 private:
  std::vector<JobId> m_running;
  Params m_variables;
  bool m_tearing_down = false;
};

}  // namespace runner
