// The jobs the scheduler runs, from their launch to their end: each by its
// id, the job each task is of (a task's id is given here, as its job is
// launched), and the jobs launched (recorded in the run log) that are not
// yet sent to their hosts.
#pragma once

#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "runner/sched/job.h"

namespace runner {

class RunningJobs {
 public:
  using Jobs = std::map<JobId, Job>;

  // `job` was launched: each of its tasks gets the next task id (from 1),
  // and it waits to be sent to its hosts.
  Job& add(Job job);
  // `job` ended: it leaves the running jobs with its tasks; nullopt when it
  // does not run.
  std::optional<Job> remove(JobId job);

  // The running job `job` (it must run).
  Job& at(JobId job) { return m_jobs.at(job); }
  const Job& at(JobId job) const { return m_jobs.at(job); }
  // nullptr when `job` does not run.
  const Job* find(JobId job) const;
  // The running job task `task` is of, and that task; nulls when no running
  // job has it.
  std::pair<Job*, Task*> job_of_task(TaskId task);

  // Jobs launched and not sent yet.
  bool any_unsent() const { return !m_unsent.empty(); }
  // Those, in launch order: sent from now on.
  std::vector<JobId> take_unsent() { return std::exchange(m_unsent, {}); }
  // `job`, launched, is never sent (it ends unstarted).
  void never_send(JobId job) { std::erase(m_unsent, job); }

  bool empty() const { return m_jobs.empty(); }
  std::size_t size() const { return m_jobs.size(); }
  // By id.
  Jobs::iterator begin() { return m_jobs.begin(); }
  Jobs::iterator end() { return m_jobs.end(); }
  Jobs::const_iterator begin() const { return m_jobs.begin(); }
  Jobs::const_iterator end() const { return m_jobs.end(); }

 private:
  Jobs m_jobs;
  std::map<TaskId, JobId> m_task_job;  // the running tasks' jobs
  TaskId m_next_task_id = 1;
  std::vector<JobId> m_unsent;  // launched (recorded), not yet sent to their hosts
};

}  // namespace runner
