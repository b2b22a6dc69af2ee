// The run's services (see services.h).
#include "runner/sched/services.h"

#include <algorithm>

#include "runner/config/service.h"

namespace runner {

ServiceRun Services::started(const Job& job, Clock::time_point now) {
  const ServiceSpec& spec = *job.spec.service;
  ServiceRun service;
  service.ready_by = now + spec.ready_timeout;
  service.command_passed = spec.ready.empty();
  service.port_passed = spec.ready_port.empty();
  service.log_passed = spec.ready_log.empty();
  if (!spec.ready_log.empty())  // the queue's check compiled it already
    if (Result<Pattern> pattern = compile_ready_pattern(spec.ready_log))
      service.log_pattern = std::move(*pattern);
  m_running.push_back(job.id);
  return service;
}

bool Services::runs(JobId job) const {
  return std::find(m_running.begin(), m_running.end(), job) != m_running.end();
}

void Services::ready(const ServiceRun& service) {
  for (const auto& [name, value] : service.variables)
    if (!find_param(m_variables, name)) m_variables.emplace_back(name, value);
}

std::optional<JobId> Services::next_to_tear_down() {
  m_tearing_down = true;
  // The last started first: a server goes before the coordinator it
  // registered with.
  if (m_running.empty()) return std::nullopt;
  return m_running.back();
}

ServiceEnd Services::ended(const Job& job, bool stopping, JobEnd& end) {
  std::erase(m_running, job.id);
  end.again.reset();
  const Running& running = job.running();
  const ServiceRun& service = *running.service;
  if (service.torn_down || running.cancelled) return ServiceEnd::stopped;
  if (!service.not_ready_in_time && job.spec.service->restart_on_failure && !stopping) {
    Job& again = end.again.emplace(job);
    again.tasks.clear();
    ++again.attempt;
    again.state = Queued{};
    return ServiceEnd::restarted;
  }
  return ServiceEnd::failed;
}

}  // namespace runner
