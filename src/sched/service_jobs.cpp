// The scheduler's side of services (`service:`, whose state Services
// holds): a job that keeps its slots until the run ends. It is ready once
// every readiness check it has passed (its `ready:` command exited 0 on its
// host, a socket listens on its `ready_port` there, its output matched
// `ready_log`); until then the jobs after it wait. When every other job is
// done, services are stopped, the last started first, each followed by its
// `after:` command. A service that fails (ends on its own, or is not ready
// in time) stops the run from taking more jobs.
#include <fmt/format.h>

#include <algorithm>

#include "runner/config/job_render.h"
#include "runner/config/template.h"
#include "runner/sched/scheduler.h"
#include "runner/ui/exit_text.h"

namespace runner {

namespace {

// How often a readiness probe is run again.
constexpr auto k_probe_interval = std::chrono::seconds(1);
// How much of a service's output is kept to match `ready_log` against.
constexpr std::size_t k_output_kept = 64 * 1024;

std::string service_name(const Job& job) {
  const std::string& name = job.spec.service->name;
  return name.empty() ? fmt::format("#{}", job.id) : fmt::format("#{} ({})", job.id, name);
}

}  // namespace

void Scheduler::service_output(Job& job, std::string_view bytes) {
  ServiceRun& service = *job.running().service;
  if (service.ready || service.log_passed || !service.log_pattern) return;
  service.output.append(bytes);
  if (service.output.size() > k_output_kept)
    service.output.erase(0, service.output.size() - k_output_kept);
  Result<std::optional<PatternMatch>> match = service.log_pattern->search(service.output);
  if (!match) {
    // Its output goes on: a later line may match.
    if (!service.log_limit_said)
      m_observer.warning(fmt::format(
          "service {} [{}]: matching its ready_log `{}` stopped at a limit ({}); it is matched "
          "again as more output comes",
          service_name(job), job.label(), job.spec.service->ready_log, match.status().message()));
    service.log_limit_said = true;
    return;
  }
  if (!*match) return;
  service.variables = ready_variables(
      job.spec.service->name.empty() ? std::to_string(job.id) : job.spec.service->name,
      *service.log_pattern, **match);
  service.log_passed = true;
  service.output.clear();
  mark_ready_if_passed(job);
}

void Scheduler::probe_services(Clock::time_point now) {
  for (JobId id : m_services.running()) {
    Job& job = m_running.at(id);
    ServiceRun& service = *job.running().service;
    if (service.ready || job.running().kill_at) continue;
    if (now >= service.ready_by) {
      service.not_ready_in_time = true;
      job.running().timed_out = true;  // the journal's job_end says it timed out
      m_observer.warning(fmt::format(
          "service {} [{}] was not ready within {}; stopping it", service_name(job), job.label(),
          job.spec.service->ready_timeout_text.empty() ? "10m"
                                                       : job.spec.service->ready_timeout_text));
      stop_job(job, now);
      continue;
    }
    if (!job.tasks.front().started() || service.probes_in_flight > 0) continue;
    if (service.next_probe && now < *service.next_probe) continue;
    service.next_probe = now + k_probe_interval;
    probe_readiness(job);
  }
}

void Scheduler::probe_readiness(Job& job) {
  ServiceRun& service = *job.running().service;
  const Task& task = job.tasks.front();
  JobId id = job.id;
  if (!service.command_passed) {
    Result<std::string> command = render_for_job(job.spec.service->ready, job.spec, m_fleet,
                                                 task.slots, m_services.variables());
    if (command) {
      ++service.probes_in_flight;
      m_executors[task.host]->run_command(*command, [this, id](const JobExit& exit,
                                                               const std::string&) {
        if (exit.succeeded()) service_passed(id, &ServiceRun::command_passed);
        else service_passed(id, nullptr);
      });
    } else {
      m_observer.warning(
          fmt::format("#{}: its ready command: {}", id, command.status().message()));
      service.command_passed = true;
    }
  }
  if (!service.port_passed) {
    std::optional<int> port;
    Result<std::string> port_text = render_for_job(job.spec.service->ready_port, job.spec,
                                                   m_fleet, task.slots, builtins_for(job, task));
    if (port_text) port = parse_port(*port_text);
    if (!port) {
      m_observer.warning(fmt::format("service {}: its ready_port `{}` is not a port on {}; "
                                     "stopping it",
                                     service_name(job), job.spec.service->ready_port,
                                     task.label));
      service.not_ready_in_time = true;
      stop_job(job, m_options.clock());
      return;
    }
    ++service.probes_in_flight;
    m_executors[task.host]->survey_network(
        [this, id, port = *port](const Result<NetworkSurvey>& survey) {
          bool listening = survey && survey->listening_ports.count(port) > 0;
          service_passed(id, listening ? &ServiceRun::port_passed : nullptr);
        });
  }
}

void Scheduler::service_passed(JobId id, bool ServiceRun::*check) {
  auto it = m_running.find(id);
  if (it == m_running.end() || !it->second.running().service) return;
  ServiceRun& service = *it->second.running().service;
  --service.probes_in_flight;
  if (check) service.*check = true;
  mark_ready_if_passed(it->second);
}

void Scheduler::mark_ready_if_passed(Job& job) {
  Running& running = job.running();
  ServiceRun& service = *running.service;
  if (service.ready || running.kill_at || !job.tasks.front().started()) return;
  if (!service.command_passed || !service.port_passed || !service.log_passed) return;
  service.ready = true;
  m_services.ready(service);
  m_observer.service_ready(job, m_options.clock() - running.start, service.variables);
  m_queue_dirty = true;
}

bool Scheduler::service_starting() const {
  const std::vector<JobId>& services = m_services.running();
  return std::any_of(services.begin(), services.end(), [&](JobId id) {
    return !m_running.at(id).running().service->ready;
  });
}

void Scheduler::tear_down_next_service(Clock::time_point now) {
  std::optional<JobId> next = m_services.next_to_tear_down();
  if (!next) return;
  Job& job = m_running.at(*next);
  if (!job.running().service->torn_down) tear_down_service(job, now);  // else: wait for its end
}

void Scheduler::tear_down_service(Job& job, Clock::time_point now) {
  job.running().service->torn_down = true;
  // The journal's job_end says the runner stopped it: not a failure.
  job.running().cancelled = true;
  if (!job.running().kill_at) stop_job(job, now);
}

std::size_t Scheduler::stop_service(std::string_view name, Clock::time_point now) {
  std::size_t stopped = 0;
  for (JobId id : m_services.running()) {
    Job& job = m_running.at(id);
    if (name != job.spec.service->name && name != fmt::format("#{}", id)) continue;
    ++stopped;
    if (job.running().service->torn_down) continue;
    m_observer.notice(fmt::format("stopping service {} [{}], as asked", service_name(job),
                                  job.label()));
    tear_down_service(job, now);
  }
  if (stopped == 0)
    m_observer.warning(fmt::format("asked to stop the service {}, but none of that name runs",
                                   name));
  return stopped;
}

bool Scheduler::service_ended(Job& job, JobEnd& end) {
  ServiceEnd what = m_services.ended(job, m_stopping, end);
  if (what == ServiceEnd::restarted) {
    m_observer.warning(fmt::format("service {} [{}] ended: {}; starting it again",
                                   service_name(job), job.label(), describe_exit(end.exit)));
    return false;
  }
  kill_rest_of_service(job);
  if (what == ServiceEnd::stopped) return false;
  if (!job.running().service->not_ready_in_time)
    m_observer.warning(fmt::format("service {} [{}] ended before the run did: {}",
                                   service_name(job), job.label(), describe_exit(end.exit)));
  // What comes after a service needs it: nothing more starts.
  if (!m_stopping) {
    m_stopping = true;
    m_observer.notice("a service failed; no more jobs start, and the running ones finish "
                      "before the other services are stopped (Ctrl-C to stop them now)");
  }
  return true;
}

void Scheduler::kill_rest_of_service(const Job& job) {
  const Task& task = job.tasks.front();
  if (!task.ended_on_its_host()) {
    run_after_command(job);
    return;
  }
  // Counted as an after command: the run does not end before it.
  ++m_after_commands;
  m_executors[task.host]->kill_leftovers({task.group}, [this, job](const LeftoverCheck& check) {
    --m_after_commands;
    if (!check.killed.empty())
      m_observer.notice(fmt::format("service {} [{}]: killed what of it outlived its shell "
                                    "(process group {})",
                                    service_name(job), job.label(), job.tasks.front().group.id));
    run_after_command(job);
  });
}

void Scheduler::run_after_command(const Job& job) {
  const std::string& after = job.spec.service->after;
  if (after.empty()) return;
  const Task& task = job.tasks.front();
  Result<std::string> command =
      render_for_job(after, job.spec, m_fleet, task.slots, m_services.variables());
  if (!command) {
    m_observer.warning(
        fmt::format("#{}: its after command: {}", job.id, command.status().message()));
    return;
  }
  ++m_after_commands;
  JobId id = job.id;
  m_executors[task.host]->run_command(
      *command, [this, id](const JobExit& exit, const std::string& output) {
        --m_after_commands;
        if (!exit.succeeded())
          m_observer.warning(fmt::format("the after command of #{} failed ({}){}{}", id,
                                         describe_exit(exit), output.empty() ? "" : ": ",
                                         output));
      });
}

}  // namespace runner
