// The run's services (`service:`): jobs that keep their slots until the run
// ends. A service is ready once every readiness check it has passed (its
// `ready:` command exited 0 on its host, a socket listens on its
// `ready_port` there, its output matched `ready_log`); until then the jobs
// after it wait. When every other job is done, services are stopped, the
// last started first, each followed by its `after:` command. A service that
// fails (ends on its own, or is not ready in time) stops the run from
// taking more jobs.
//
// This holds which services run, in the order they started, how far each
// one's readiness is, what the ready ones gave (ready_log's variables), and
// whether the run's end is stopping them; it decides when to probe, which
// to stop, and what a service's end means, and says so to the observer.
// The scheduler runs on the hosts what it asks for (probes, stops, the
// kill of leftovers, `after:` commands) and hands back the answers.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/params.h"
#include "runner/core/clock.h"
#include "runner/exec/host_ops.h"
#include "runner/sched/job.h"
#include "runner/sched/job_end.h"
#include "runner/sched/run_observer.h"
#include "runner/sched/running_jobs.h"
#include "runner/state/run_log.h"

namespace runner {

// What to do now for a service's readiness, on its host.
struct ReadinessStep {
  enum class Action {
    run_command,    // run its `ready:` command (`command`): ready when it exits 0
    look_for_port,  // ready when a socket listens on `port`
    stop,           // not ready in time, or its ready_port is not a port: stop it
  };
  Action action = Action::run_command;
  JobId job = 0;
  int host = 0;
  std::string command;
  int port = 0;
  bool timed_out = false;  // stop: its ready_timeout passed (the journal says it timed out)
};

// What is left to do on a service's host once it ended: kill what of it
// outlived its shell (a program that outlived the TERM), then run its
// `after:` command.
struct ServiceCleanup {
  JobId job = 0;
  std::string name;  // "#3 (db) [a gpu=0]", for messages
  int host = 0;
  std::optional<ProcessGroup> leftovers;
  std::optional<std::string> after;  // rendered
};

// `runner stop NAME`: how many running services are named so, and those of
// them to stop now (the others are stopping already).
struct StopRequest {
  std::size_t named = 0;
  std::vector<JobId> to_stop;
};

class Services {
 public:
  // Services run on `fleet`'s slots as the scheduler's `jobs` (the running
  // ones, by id) say; what happens to them is said to `observer`.
  Services(const Fleet& fleet, const RunningJobs& jobs, RunLog& run_log,
           RunObserver& observer);

  // `job`, a service, was launched at `now`: its readiness starts (the
  // checks it has no need of passed, its ready_timeout from now).
  void started(const Job& job, Clock::time_point now);
  // The running services, in the order they started.
  const std::vector<JobId>& running() const { return m_start_order; }
  bool any() const { return !m_start_order.empty(); }
  // `job` is a running service.
  bool runs(JobId job) const;
  // A running service is not ready yet: jobs after it wait.
  bool starting() const;

  // The variables a task's templates see besides its slots' and its job's:
  // its rank's (of `layout`, for a job that spans hosts), and what ready
  // services gave (the first service to give a name keeps it).
  Params variables_for(const JobSpec& spec, const NodeLayout* layout, int rank) const;
  Params variables_for(const Job& job, const Task& task) const {
    return variables_for(job.spec, job.layout ? &*job.layout : nullptr, task.rank);
  }

  // Readiness. Each is true when the service became ready by it: the jobs
  // after it may start.
  // Every process of `job` started at `now`.
  bool process_started(const Job& job, Clock::time_point now);
  // `job` printed `bytes` (matched against its ready_log).
  bool output(const Job& job, std::string_view bytes, Clock::time_point now);
  // A probe of `job` (its ready command, or its port) answered `passed`.
  bool probe_answered(JobId job, ReadinessStep::Action probe, bool passed, Clock::time_point now);
  // What to do at `now` for the services not ready yet: probes to run
  // (each in flight from now on), services to stop.
  std::vector<ReadinessStep> readiness_steps(Clock::time_point now);
  // When a service not ready yet is next probed or given up on.
  std::optional<Clock::time_point> next_due() const;

  // Every other job is done: the services are stopped, one at a time, the
  // last started first. The one to stop now (it is torn down from now on);
  // nullopt while the last one stops, or once none runs.
  std::optional<JobId> next_to_tear_down();
  // The run's end is stopping the services: no job is taken any more.
  bool tearing_down() const { return m_tearing_down; }
  // `runner stop NAME`: the running services named NAME (`service: NAME`,
  // or "#ID" for any service) are torn down (said, or, when none is, that).
  StopRequest stop_asked(std::string_view name);

  // A running service `job` ended, as judge_end said in `end`: it no longer
  // runs, and `end` says what that means for the run: it runs again
  // (`end.again`, `restart: on-failure`, never once the run is
  // `stopping`), the runner stopped it (`stopped_by_runner`), or it failed
  // and nothing more starts (`stops_run`). What is left to do on its host;
  // nullopt when it runs again.
  std::optional<ServiceCleanup> ended(const Job& job, bool stopping, JobEnd& end);
  // Its cleanup's leftovers were looked for, and killed if found.
  void leftovers_killed(const ServiceCleanup& cleanup, const LeftoverCheck& check);
  // Its cleanup's `after:` command ended.
  void after_command_ended(const ServiceCleanup& cleanup, const JobExit& exit,
                           const std::string& output);

 private:
  // A running service's readiness.
  struct ServiceRun {
    bool ready = false;
    bool torn_down = false;  // stopped by the runner: the run ends, or `runner stop` asked
    bool not_ready_in_time = false;
    Clock::time_point ready_by;  // its ready_timeout, from its start
    // The readiness checks it has passed (those it has no need of pass).
    bool command_passed = false;
    bool port_passed = false;
    bool log_passed = false;
    std::optional<Pattern> log_pattern;
    std::string output;           // the end of its output, for log_pattern
    bool log_limit_said = false;  // a match of log_pattern ran into its limits, and was said
    std::optional<Clock::time_point> next_probe;
    int probes_in_flight = 0;
    Params variables;  // from ready_log's groups
  };

  // Ready once each check passed, its process started and it is not
  // being stopped: says so, and keeps what it gave.
  bool ready_if_passed(const Job& job, ServiceRun& service, Clock::time_point now);
  // The probes of `job` to run now (or its stop).
  void probe(const Job& job, ServiceRun& service, std::vector<ReadinessStep>& steps);
  // What is left to do on `job`'s host now that it ended (its `after:`
  // command rendered now; said when it cannot be).
  ServiceCleanup cleanup_of(const Job& job);

  const Fleet& m_fleet;
  const RunningJobs& m_jobs;
  RunLog& m_run_log;
  RunObserver& m_observer;
  std::vector<JobId> m_start_order;  // the running services
  std::map<JobId, ServiceRun> m_runs;
  Params m_variables;
  bool m_tearing_down = false;
};

}  // namespace runner
