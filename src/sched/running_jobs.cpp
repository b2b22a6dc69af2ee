#include "runner/sched/running_jobs.h"

namespace runner {

Job& RunningJobs::add(Job job) {
  for (Task& task : job.tasks) {
    task.id = m_next_task_id++;
    m_task_job[task.id] = job.id;
  }
  JobId id = job.id;
  Job& added = m_jobs.emplace(id, std::move(job)).first->second;
  m_unsent.push_back(id);
  return added;
}

std::optional<Job> RunningJobs::remove(JobId id) {
  auto it = m_jobs.find(id);
  if (it == m_jobs.end()) return std::nullopt;
  Job job = std::move(it->second);
  m_jobs.erase(it);
  for (const Task& task : job.tasks) m_task_job.erase(task.id);
  return job;
}

const Job* RunningJobs::find(JobId id) const {
  auto it = m_jobs.find(id);
  return it == m_jobs.end() ? nullptr : &it->second;
}

std::pair<Job*, Task*> RunningJobs::job_of_task(TaskId id) {
  auto owner = m_task_job.find(id);
  if (owner == m_task_job.end()) return {nullptr, nullptr};
  Job& job = m_jobs.at(owner->second);
  Task* task = nullptr;
  for (Task& candidate : job.tasks)
    if (candidate.id == id) task = &candidate;
  return {&job, task};
}

}  // namespace runner
