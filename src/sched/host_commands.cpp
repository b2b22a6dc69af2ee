// The commands the scheduler runs on hosts for its components, and what it
// does with their answers: a look at a host's GPUs for GpuGates, a
// service's readiness probes, stops and clean-up (its leftovers killed, its
// `after:` command) for Services, a job's `cancel:` command and TERM, a
// multi-node job's hostfile removal for Gangs.
#include <fmt/format.h>
#include <signal.h>

#include "runner/config/job_render.h"
#include "runner/sched/scheduler.h"

namespace runner {

void Scheduler::look_at_gpus(Clock::time_point now) {
  for (const GpuLook& look : m_gpu_gates.begin_due_looks(!m_stopping && work_waits(), now)) {
    int h = look.host;
    TaskId command = m_executors[h]->run_command(
        look.command, [this, h](const JobExit& exit, const std::string& output) {
          if (m_gpu_gates.looked(h, exit, output, m_options.clock())) m_queue_dirty = true;
        });
    m_gpu_gates.look_runs_as(h, command);
  }
}

void Scheduler::take_readiness_steps(Clock::time_point now) {
  for (ReadinessStep& step : m_services.readiness_steps(now)) {
    Executor& executor = *m_executors[step.host];
    JobId id = step.job;
    auto answered = [this, id, probe = step.action](bool passed) {
      if (m_services.probe_answered(id, probe, passed, m_options.clock())) m_queue_dirty = true;
    };
    switch (step.action) {
      case ReadinessStep::Action::run_command:
        executor.run_command(step.command, [answered](const JobExit& exit, const std::string&) {
          answered(exit.succeeded());
        });
        break;
      case ReadinessStep::Action::look_for_port:
        executor.survey_network([answered, port = step.port](const Result<NetworkSurvey>& survey) {
          answered(survey && survey->listening_ports.count(port) > 0);
        });
        break;
      case ReadinessStep::Action::stop: {
        Job& job = m_running.at(id);
        // The journal's job_end says it timed out.
        if (step.timed_out) job.running().timed_out = true;
        stop_job(job, now);
        break;
      }
    }
  }
}

void Scheduler::stop_job(Job& job, Clock::time_point now) {
  for (const Task& task : job.tasks) {
    if (task.exit) continue;
    if (!job.spec.cancel.empty()) run_cancel_command(job, task);
    m_executors[task.host]->signal_task(task.id, SIGTERM);
  }
  job.running().kill_at = now + m_options.kill_grace;
}

void Scheduler::tear_down(Job& job, Clock::time_point now) {
  // The journal's job_end says the runner stopped it: not a failure.
  job.running().cancelled = true;
  if (!job.running().kill_at) stop_job(job, now);
}

std::size_t Scheduler::stop_service(std::string_view name, Clock::time_point now) {
  StopRequest request = m_services.stop_asked(name);
  for (JobId id : request.to_stop) tear_down(m_running.at(id), now);
  return request.named;
}

void Scheduler::clean_up_after(ServiceCleanup cleanup) {
  if (!cleanup.leftovers) {
    run_after_command(std::move(cleanup));
    return;
  }
  // Counted as an after command: the run does not end before it.
  ++m_after_commands;
  Executor& executor = *m_executors[cleanup.host];
  std::vector<ProcessGroup> groups{*cleanup.leftovers};
  executor.kill_leftovers(groups, [this, cleanup = std::move(cleanup)](const LeftoverCheck& check) {
    --m_after_commands;
    m_services.leftovers_killed(cleanup, check);
    run_after_command(cleanup);
  });
}

void Scheduler::run_after_command(ServiceCleanup cleanup) {
  if (!cleanup.after) return;
  ++m_after_commands;
  Executor& executor = *m_executors[cleanup.host];
  std::string command = *cleanup.after;
  executor.run_command(command, [this, cleanup = std::move(cleanup)](const JobExit& exit,
                                                                     const std::string& output) {
    --m_after_commands;
    m_services.after_command_ended(cleanup, exit, output);
  });
}

void Scheduler::run_cancel_command(const Job& job, const Task& task) {
  Result<std::string> command = render_for_job(job.spec.cancel, job.spec, m_fleet, task.slots,
                                               m_services.variables_for(job, task));
  if (!command) {
    m_observer.warning(
        fmt::format("#{}: its cancel command: {}", job.id, command.status().message()));
    return;
  }
  JobId id = job.id;
  m_executors[task.host]->run_command(
      *command, [this, id](const JobExit& exit, const std::string& output) {
        if (!exit.succeeded())
          m_observer.warning(fmt::format("the cancel command of #{} failed{}{}", id,
                                         output.empty() ? "" : ": ", output));
      });
}

void Scheduler::remove_hostfile(const HostfileRemoval& removal) {
  for (int host : removal.hosts) {
    ++m_after_commands;
    m_executors[host]->remove_files(
        {removal.path}, [this, id = removal.job](const JobExit& exit, const std::string& output) {
          --m_after_commands;
          if (!exit.succeeded() && !exit.lost())
            m_observer.warning(fmt::format("#{}: its hostfile could not be removed: {}", id,
                                           output.empty() ? exit.error() : output));
        });
  }
}

}  // namespace runner
