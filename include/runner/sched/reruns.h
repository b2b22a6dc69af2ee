// The jobs to run before the queue file's, first to last: those put back at
// their head (lost with their host, failed with retries left, or not
// started), then a dead run's jobs to run again (`--resume`) and those taken
// out of a long queue ahead of need, in the order they came.
#pragma once

#include <cstddef>
#include <deque>

#include "runner/sched/host_table.h"
#include "runner/sched/job.h"
#include "runner/sched/job_end.h"
#include "runner/sched/run_observer.h"

namespace runner {

class Reruns {
 public:
  Reruns(Mode mode, RunObserver& observer) : m_mode(mode), m_observer(observer) {}

  bool empty() const { return m_jobs.empty(); }
  std::size_t size() const { return m_jobs.size(); }
  // The first of them (there is one).
  const Job& next() const { return m_jobs.front(); }
  Job take_next();

  // Back at the head, to run before the others.
  void put_back(Job job) { m_jobs.push_front(std::move(job)); }
  // Taken out of the queue file ahead of need: it runs after the others.
  void add_taken_ahead(Job job);
  // A job a dead run left unfinished (or to run again): its next attempt
  // runs after the others, a copy of an `every: host` job on its host. A
  // broadcast step's share is not run again (said).
  void add_orphan(OrphanJob orphan);

  // Those taken ahead of need: the journal keeps them for `--resume`.
  std::size_t taken_ahead_waiting() const;

 private:
  Mode m_mode;
  RunObserver& m_observer;
  std::deque<Job> m_jobs;
};

}  // namespace runner
