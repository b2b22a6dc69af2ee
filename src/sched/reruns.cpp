// The jobs to run before the queue file's (see reruns.h).
#include "runner/sched/reruns.h"

#include <fmt/format.h>

#include <algorithm>

namespace runner {

Job Reruns::take_next() {
  Job job = std::move(m_jobs.front());
  m_jobs.pop_front();
  return job;
}

void Reruns::add_taken_ahead(Job job) {
  std::get<Queued>(job.state).taken_ahead = true;
  m_jobs.push_back(std::move(job));
}

void Reruns::add_orphan(OrphanJob orphan) {
  if (m_mode == Mode::broadcast) {
    m_observer.warning(fmt::format(
        "job #{} was one slot's share of a broadcast step; broadcast steps are not run again "
        "(it is in consumed.yaml)",
        orphan.id));
    return;
  }
  Job job;
  job.id = orphan.id;
  job.spec = std::move(orphan.spec);
  job.attempt = orphan.attempt + 1;
  job.requeues = orphan.requeues;
  if (job.spec.every_host) job.pinned_host = orphan.host;
  m_jobs.push_back(std::move(job));
}

std::size_t Reruns::taken_ahead_waiting() const {
  return std::count_if(m_jobs.begin(), m_jobs.end(),
                       [](const Job& job) { return std::get<Queued>(job.state).taken_ahead; });
}

}  // namespace runner
