// Bringing back the files a job's `outputs:` names, from each of its tasks'
// hosts, once it ended (also when it failed: the logs of a failed run
// matter), into the run's outputs folder, a folder of its own for each
// attempt.
#include <fmt/format.h>

#include "runner/config/job_render.h"
#include "runner/sched/job_records.h"
#include "runner/sched/scheduler.h"
#include "runner/state/state_dir.h"

namespace runner {

void Scheduler::collect_outputs(const Job& job) {
  if (job.spec.outputs.empty() || m_options.outputs_dir.empty()) return;
  for (const Task& task : job.tasks) {
    // Nothing ran there, or its host is gone with the files.
    if (!task.ended_on_its_host()) continue;
    Result<std::string> rendered = render_for_job(job.spec.outputs, job.spec, m_fleet, task.slots,
                                                  m_services.variables_for(job, task));
    if (!rendered) {
      m_observer.warning(fmt::format("#{}: its outputs: {}", job.id, rendered.status().message()));
      continue;
    }
    const std::string& patterns = *rendered;
    std::optional<int> rank;
    if (job.layout) rank = task.rank;
    std::string into = attempt_outputs_dir(m_options.outputs_dir, job.id, job.attempt);
    if (rank) into += fmt::format("/{}", *rank);
    ++m_fetches;
    Executor& executor = *m_executors[task.host];
    // Files named by an absolute path come back without the leading '/':
    // only relative ones are removed by what came back.
    bool absolute = patterns.rfind('/', 0) == 0 || patterns.find(" /") != std::string::npos;
    if (job.spec.outputs_cleanup && absolute)
      m_observer.warning(fmt::format("#{}: outputs_cleanup leaves files named by an absolute path "
                                     "on the host",
                                     job.id));
    bool cleanup = job.spec.outputs_cleanup && !absolute;
    JobId id = job.id;
    int attempt = job.attempt;
    executor.get_files(patterns, into,
                       [this, id, attempt, rank, into, cleanup,
                        &executor](const FetchedFiles& fetched) {
                         --m_fetches;
                         m_run_log.record_outputs(id, attempt, rank, into, fetched.files,
                                                  fetched.missing, outputs_problem(fetched));
                         m_observer.outputs_collected(id, attempt, rank, into, fetched);
                         if (!cleanup || fetched.files.empty()) return;
                         std::vector<std::string> paths;
                         for (const OutputFile& file : fetched.files) paths.push_back(file.path);
                         ++m_after_commands;
                         executor.remove_files(paths, [this, id](const JobExit& exit,
                                                                 const std::string& output) {
                           --m_after_commands;
                           if (!exit.succeeded())
                             m_observer.warning(fmt::format(
                                 "#{}: its outputs could not be removed from its host: {}", id,
                                 output.empty() ? exit.error() : output));
                         });
                       });
  }
}

}  // namespace runner
