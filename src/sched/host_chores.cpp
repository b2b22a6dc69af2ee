#include "runner/sched/host_chores.h"

#include <fmt/format.h>

#include "runner/config/job_render.h"
#include "runner/sched/job_records.h"
#include "runner/state/state_dir.h"

namespace runner {

HostChores::HostChores(const Fleet& fleet, Hosts& hosts, const SchedulerOptions& options,
                       Services& services, GpuGates& gpu_gates, RunLog& run_log,
                       RunObserver& observer, std::function<void()> changed)
    : m_fleet(fleet),
      m_hosts(hosts),
      m_options(options),
      m_services(services),
      m_gpu_gates(gpu_gates),
      m_run_log(run_log),
      m_observer(observer),
      m_changed(std::move(changed)) {}

void HostChores::collect_outputs(const Job& job) {
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
    ++m_under_way;
    HostOps& host_ops = m_hosts.ops(task.host);
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
    host_ops.get_files(patterns, into,
                       [this, id, attempt, rank, into, cleanup,
                        &host_ops](const FetchedFiles& fetched) {
                         --m_under_way;
                         m_run_log.record_outputs(id, attempt, rank, into, fetched.files,
                                                  fetched.missing, outputs_problem(fetched));
                         m_observer.outputs_collected(id, attempt, rank, into, fetched);
                         if (!cleanup || fetched.files.empty()) return;
                         std::vector<std::string> paths;
                         for (const OutputFile& file : fetched.files) paths.push_back(file.path);
                         ++m_under_way;
                         host_ops.remove_files(paths, [this, id](const JobExit& exit,
                                                                 const std::string& output) {
                           --m_under_way;
                           if (!exit.succeeded())
                             m_observer.warning(fmt::format(
                                 "#{}: its outputs could not be removed from its host: {}", id,
                                 output.empty() ? exit.error() : output));
                         });
                       });
  }
}

void HostChores::remove_hostfile(const HostfileRemoval& removal) {
  for (int host : removal.hosts) {
    ++m_under_way;
    m_hosts.ops(host).remove_files(
        {removal.path}, [this, id = removal.job](const JobExit& exit, const std::string& output) {
          --m_under_way;
          if (!exit.succeeded() && !exit.lost())
            m_observer.warning(fmt::format("#{}: its hostfile could not be removed: {}", id,
                                           output.empty() ? exit.error() : output));
        });
  }
}

void HostChores::clean_up_after(ServiceCleanup cleanup) {
  if (!cleanup.leftovers) {
    run_after_command(std::move(cleanup));
    return;
  }
  // Under way until its `after:` command is: the run does not end before.
  ++m_under_way;
  std::vector<ProcessGroup> groups{*cleanup.leftovers};
  m_hosts.ops(cleanup.host)
      .kill_leftovers(groups, [this, cleanup = std::move(cleanup)](const LeftoverCheck& check) {
        --m_under_way;
        m_services.leftovers_killed(cleanup, check);
        run_after_command(cleanup);
      });
}

void HostChores::run_after_command(ServiceCleanup cleanup) {
  if (!cleanup.after) return;
  ++m_under_way;
  std::string command = *cleanup.after;
  m_hosts.ops(cleanup.host)
      .run_command(command, [this, cleanup = std::move(cleanup)](const JobExit& exit,
                                                                 const std::string& output) {
        --m_under_way;
        m_services.after_command_ended(cleanup, exit, output);
      });
}

void HostChores::run_cancel_command(const Job& job, const Task& task) {
  Result<std::string> command = render_for_job(job.spec.cancel, job.spec, m_fleet, task.slots,
                                               m_services.variables_for(job, task));
  if (!command) {
    m_observer.warning(
        fmt::format("#{}: its cancel command: {}", job.id, command.status().message()));
    return;
  }
  JobId id = job.id;
  m_hosts.ops(task.host)
      .run_command(*command, [this, id](const JobExit& exit, const std::string& output) {
        if (!exit.succeeded())
          m_observer.warning(fmt::format("the cancel command of #{} failed{}{}", id,
                                         output.empty() ? "" : ": ", output));
      });
}

void HostChores::look_at_gpus(bool wanted, Clock::time_point now) {
  for (const GpuLook& look : m_gpu_gates.begin_due_looks(wanted, now)) {
    int h = look.host;
    TaskId command = m_hosts.ops(h).look_at_gpus([this, h](const GpuLookAnswer& answer) {
      if (m_gpu_gates.looked(h, answer, m_options.clock())) m_changed();
    });
    m_gpu_gates.look_runs_as(h, command);
  }
}

void HostChores::give_up_gpu_looks(Clock::time_point now) {
  for (const GpuLookGivenUp& look : m_gpu_gates.give_up_overdue(now)) {
    m_changed();
    m_hosts.ops(look.host).stop_command(look.command);
  }
}

void HostChores::probe(const ReadinessStep& step) {
  JobId id = step.job;
  auto answered = [this, id, probe = step.action](bool passed) {
    if (m_services.probe_answered(id, probe, passed, m_options.clock())) m_changed();
  };
  HostOps& host_ops = m_hosts.ops(step.host);
  if (step.action == ReadinessStep::Action::look_for_port)
    host_ops.survey_network([answered, port = step.port](const Result<NetworkSurvey>& survey) {
      answered(survey && survey->listening_ports.count(port) > 0);
    });
  else
    host_ops.run_command(step.command, [answered](const JobExit& exit, const std::string&) {
      answered(exit.succeeded());
    });
}

}  // namespace runner
