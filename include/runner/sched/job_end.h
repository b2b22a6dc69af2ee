// What a job's end means, decided once and without side effects: how it
// ended, with the runner's own reasons added (its timeout, an interrupt,
// "not tried again"), whether it runs again, and as what. Queue mode puts a
// job back when it was lost with its host (up to max_requeue times; lost
// with its Slurm allocation, always and uncounted), when it
// failed with retries left (on another slot if one is free), and, as the
// same attempt, when its process never started (until it could not start
// on any host). Broadcast steps are never redone. Once the run is stopping
// nothing runs again in it, but a job lost then still goes back: it waits
// for the next run (`--resume`).
#pragma once

#include <optional>

#include "runner/core/job_exit.h"
#include "runner/sched/job.h"

namespace runner {

enum class Mode { queue, broadcast };

struct EndRules {
  Mode mode = Mode::queue;
  int max_requeue = 2;
  int default_retries = 0;  // for jobs that do not say `retries:`
  int hosts = 1;            // how many hosts a job that cannot start may try
  bool stopping = false;    // the run is stopping: no retry of a failure
  // Every host's allocation is ending (Slurm): a job lost now is lost with
  // the allocation, through no fault of its own.
  bool allocation_ending = false;
};

struct JobEnd {
  JobExit exit;              // as reported, with the runner's reasons
  std::optional<Job> again;  // the job as it goes back to the queue (Queued)
  // The runner stopped it where that is no failure (a service, at the
  // run's end or as `runner stop` asked).
  bool stopped_by_runner = false;
  // Nothing more starts in this run (a service failed: what comes after
  // needs it).
  bool stops_run = false;
  // It ended for good without succeeding: the run's exit status says so.
  bool failed() const { return !exit.succeeded() && !again && !stopped_by_runner; }
};

// `job` is Running; `reported` is what its executor said of its end.
JobEnd judge_end(const Job& job, const JobExit& reported, const EndRules& rules);

// How a Running job whose every task has ended ended: as the rank that
// failed first (and stopped the others), else as the first that did not
// succeed, else as the first.
JobExit exit_of_tasks(const Job& job);

}  // namespace runner
