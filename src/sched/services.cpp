// The run's services (see services.h).
#include "runner/sched/services.h"

#include <fmt/format.h>

#include <algorithm>

#include "runner/config/job_render.h"
#include "runner/config/service.h"
#include "runner/config/template.h"
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

Services::Services(const Fleet& fleet, const RunningJobs& jobs, RunLog& run_log,
                   RunObserver& observer)
    : m_fleet(fleet), m_jobs(jobs), m_run_log(run_log), m_observer(observer) {}

void Services::started(const Job& job, Clock::time_point now) {
  const ServiceSpec& spec = *job.spec.service;
  ServiceRun service;
  service.ready_by = now + spec.ready_timeout;
  service.command_passed = spec.ready.empty();
  service.port_passed = spec.ready_port.empty();
  service.log_passed = spec.ready_log.empty();
  if (!spec.ready_log.empty())  // the queue's check compiled it already
    if (Result<Pattern> pattern = compile_ready_pattern(spec.ready_log))
      service.log_pattern = std::move(*pattern);
  m_runs.insert_or_assign(job.id, std::move(service));
  m_start_order.push_back(job.id);
}

bool Services::runs(JobId job) const {
  return std::find(m_start_order.begin(), m_start_order.end(), job) != m_start_order.end();
}

bool Services::starting() const {
  return std::any_of(m_start_order.begin(), m_start_order.end(),
                     [&](JobId id) { return !m_runs.at(id).ready; });
}

Params Services::variables_for(const JobSpec& spec, const NodeLayout* layout, int rank) const {
  Params variables;
  if (layout) variables = multi_node_variables(spec, *layout, rank);
  variables.insert(variables.end(), m_variables.begin(), m_variables.end());
  return variables;
}

bool Services::process_started(const Job& job, Clock::time_point now) {
  return ready_if_passed(job, m_runs.at(job.id), now);
}

bool Services::output(const Job& job, std::string_view bytes, Clock::time_point now) {
  ServiceRun& service = m_runs.at(job.id);
  if (service.ready || service.log_passed || !service.log_pattern) return false;
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
    return false;
  }
  if (!*match) return false;
  service.variables = ready_variables(
      job.spec.service->name.empty() ? std::to_string(job.id) : job.spec.service->name,
      *service.log_pattern, **match);
  service.log_passed = true;
  service.output.clear();
  return ready_if_passed(job, service, now);
}

std::vector<ReadinessStep> Services::readiness_steps(Clock::time_point now) {
  std::vector<ReadinessStep> steps;
  for (JobId id : m_start_order) {
    const Job& job = m_jobs.at(id);
    ServiceRun& service = m_runs.at(id);
    if (service.ready || job.running().kill_at) continue;
    if (now >= service.ready_by) {
      service.not_ready_in_time = true;
      m_observer.warning(fmt::format(
          "service {} [{}] was not ready within {}; stopping it", service_name(job), job.label(),
          job.spec.service->ready_timeout_text.empty() ? "10m"
                                                       : job.spec.service->ready_timeout_text));
      steps.push_back(
          ReadinessStep{ReadinessStep::Action::stop, id, job.tasks.front().host, {}, 0, true});
      continue;
    }
    if (!job.tasks.front().started() || service.probes_in_flight > 0) continue;
    if (service.next_probe && now < *service.next_probe) continue;
    service.next_probe = now + k_probe_interval;
    probe(job, service, steps);
  }
  return steps;
}

void Services::probe(const Job& job, ServiceRun& service, std::vector<ReadinessStep>& steps) {
  const Task& task = job.tasks.front();
  if (!service.command_passed) {
    Result<std::string> command =
        render_for_job(job.spec.service->ready, job.spec, m_fleet, task.slots, m_variables);
    if (command) {
      ++service.probes_in_flight;
      steps.push_back(
          ReadinessStep{ReadinessStep::Action::run_command, job.id, task.host, *command});
    } else {
      m_observer.warning(
          fmt::format("#{}: its ready command: {}", job.id, command.status().message()));
      service.command_passed = true;
    }
  }
  if (!service.port_passed) {
    std::optional<int> port;
    Result<std::string> port_text = render_for_job(job.spec.service->ready_port, job.spec, m_fleet,
                                                   task.slots, variables_for(job, task));
    if (port_text) port = parse_port(*port_text);
    if (!port) {
      m_observer.warning(
          fmt::format("service {}: its ready_port `{}` is not a port on {}; "
                      "stopping it",
                      service_name(job), job.spec.service->ready_port, task.label));
      service.not_ready_in_time = true;
      steps.push_back(ReadinessStep{ReadinessStep::Action::stop, job.id, task.host});
      return;
    }
    ++service.probes_in_flight;
    steps.push_back(
        ReadinessStep{ReadinessStep::Action::look_for_port, job.id, task.host, {}, *port});
  }
}

bool Services::probe_answered(JobId id, ReadinessStep::Action probe, bool passed,
                              Clock::time_point now) {
  auto run = m_runs.find(id);
  const Job* job = m_jobs.find(id);
  if (run == m_runs.end() || !job) return false;
  ServiceRun& service = run->second;
  --service.probes_in_flight;
  if (passed && probe == ReadinessStep::Action::run_command) service.command_passed = true;
  if (passed && probe == ReadinessStep::Action::look_for_port) service.port_passed = true;
  return ready_if_passed(*job, service, now);
}

bool Services::ready_if_passed(const Job& job, ServiceRun& service, Clock::time_point now) {
  const Running& running = job.running();
  if (service.ready || running.kill_at || !job.tasks.front().started()) return false;
  if (!service.command_passed || !service.port_passed || !service.log_passed) return false;
  service.ready = true;
  for (const auto& [name, value] : service.variables)
    if (!find_param(m_variables, name)) m_variables.emplace_back(name, value);
  Clock::duration waited = now - running.start;
  m_run_log.record_service_ready(
      job.id, std::chrono::duration_cast<std::chrono::milliseconds>(waited), service.variables);
  m_observer.service_ready(job, waited, service.variables);
  return true;
}

std::optional<Clock::time_point> Services::next_due() const {
  std::optional<Clock::time_point> due;
  auto consider = [&](const std::optional<Clock::time_point>& t) {
    if (t && (!due || *t < *due)) due = t;
  };
  for (JobId id : m_start_order) {
    const ServiceRun& service = m_runs.at(id);
    if (service.ready || m_jobs.at(id).running().kill_at) continue;
    consider(service.ready_by);
    consider(service.next_probe);
  }
  return due;
}

std::optional<JobId> Services::next_to_tear_down() {
  m_tearing_down = true;
  // The last started first: a server goes before the coordinator it
  // registered with.
  if (m_start_order.empty()) return std::nullopt;
  ServiceRun& last = m_runs.at(m_start_order.back());
  if (last.torn_down) return std::nullopt;  // wait for its end
  last.torn_down = true;
  return m_start_order.back();
}

StopRequest Services::stop_asked(std::string_view name) {
  StopRequest request;
  for (JobId id : m_start_order) {
    const Job& job = m_jobs.at(id);
    if (name != job.spec.service->name && name != fmt::format("#{}", id)) continue;
    ++request.named;
    ServiceRun& service = m_runs.at(id);
    if (service.torn_down) continue;
    m_observer.notice(
        fmt::format("stopping service {} [{}], as asked", service_name(job), job.label()));
    service.torn_down = true;
    request.to_stop.push_back(id);
  }
  if (request.named == 0)
    m_observer.warning(
        fmt::format("asked to stop the service {}, but none of that name runs", name));
  return request;
}

std::optional<ServiceCleanup> Services::ended(const Job& job, bool stopping, JobEnd& end) {
  std::erase(m_start_order, job.id);
  const ServiceRun service = std::move(m_runs.extract(job.id).mapped());
  end.again.reset();
  end.stopped_by_runner = service.torn_down || job.running().cancelled;
  if (!end.stopped_by_runner && !service.not_ready_in_time &&
      job.spec.service->restart_on_failure && !stopping) {
    m_observer.warning(fmt::format("service {} [{}] ended: {}; starting it again",
                                   service_name(job), job.label(), describe_exit(end.exit)));
    Job& again = end.again.emplace(job);
    again.tasks.clear();
    ++again.attempt;
    again.state = Queued{};
    return std::nullopt;
  }
  ServiceCleanup cleanup = cleanup_of(job);
  if (end.stopped_by_runner) return cleanup;
  if (!service.not_ready_in_time)
    m_observer.warning(fmt::format("service {} [{}] ended before the run did: {}",
                                   service_name(job), job.label(), describe_exit(end.exit)));
  // What comes after a service needs it: nothing more starts.
  if (!stopping)
    m_observer.notice(
        "a service failed; no more jobs start, and the running ones finish "
        "before the other services are stopped (Ctrl-C to stop them now)");
  end.stops_run = true;
  return cleanup;
}

ServiceCleanup Services::cleanup_of(const Job& job) {
  const Task& task = job.tasks.front();
  ServiceCleanup cleanup{job.id, fmt::format("{} [{}]", service_name(job), job.label()), task.host};
  if (task.ended_on_its_host()) cleanup.leftovers = task.group;
  if (const std::string& after = job.spec.service->after; !after.empty()) {
    Result<std::string> command = render_for_job(after, job.spec, m_fleet, task.slots, m_variables);
    if (command)
      cleanup.after = std::move(*command);
    else
      m_observer.warning(
          fmt::format("#{}: its after command: {}", job.id, command.status().message()));
  }
  return cleanup;
}

void Services::leftovers_killed(const ServiceCleanup& cleanup, const LeftoverCheck& check) {
  if (!check.killed.empty())
    m_observer.notice(
        fmt::format("service {}: killed what of it outlived its shell "
                    "(process group {})",
                    cleanup.name, cleanup.leftovers->id));
}

void Services::after_command_ended(const ServiceCleanup& cleanup, const JobExit& exit,
                                   const std::string& output) {
  if (!exit.succeeded())
    m_observer.warning(fmt::format("the after command of #{} failed ({}){}{}", cleanup.job,
                                   describe_exit(exit), output.empty() ? "" : ": ", output));
}

}  // namespace runner
