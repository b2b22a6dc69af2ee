// A run's services for `runner status` and `runner report`: their states
// from the journal's job_start (`service`), service_ready and job_end.
#include "runner/report/service_status.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "runner/report/status_view.h"
#include "runner/state/journal.h"
#include "runner/ui/line_wrap.h"
#include "runner/ui/status_line.h"
#include "runner/ui/summary.h"

namespace runner {

namespace {

using std::chrono::milliseconds;

milliseconds between(SystemTime from, SystemTime to) {
  return to > from ? std::chrono::duration_cast<milliseconds>(to - from) : milliseconds(0);
}

}  // namespace

std::string_view service_state_name(ServiceState state) {
  switch (state) {
    case ServiceState::starting:
      return "starting";
    case ServiceState::ready:
      return "ready";
    case ServiceState::stopped:
      return "stopped";
    case ServiceState::failed:
      return "failed";
    case ServiceState::unknown:
      return "unknown";
  }
  return "unknown";
}

ServiceState service_attempt_state(const CampaignJob& attempt) {
  switch (attempt.outcome) {
    case JobOutcome::running:
      return attempt.ready_at ? ServiceState::ready : ServiceState::starting;
    case JobOutcome::unknown:
      return ServiceState::unknown;
    case JobOutcome::succeeded:
      return ServiceState::stopped;
    case JobOutcome::failed:
    case JobOutcome::lost:
      break;
  }
  // The runner stops a service by cancelling it; one not ready in time is
  // stopped as timed out, which is a failure.
  return attempt.cancelled ? ServiceState::stopped : ServiceState::failed;
}

std::vector<ServiceStatus> run_services(const Campaign& campaign, const CampaignRun& run) {
  std::vector<ServiceStatus> services;
  std::map<JobId, std::size_t> index_of;
  for (std::size_t j : run.jobs) {
    const CampaignJob& job = campaign.jobs[j];
    if (!job.is_service()) continue;
    auto [it, added] = index_of.try_emplace(job.id, services.size());
    if (added) services.emplace_back();
    ServiceStatus& service = services[it->second];  // the latest attempt wins
    service.job = &job;
    service.name = job.service == "true" ? fmt::format("#{}", job.id) : job.service;
    service.state = service_attempt_state(job);
    service.restarts = std::max(0, job.attempt - 1);
    service.log = job_log_path(campaign.state_dir, job.id);
  }
  return services;
}

std::string describe_service_state(const ServiceStatus& service, SystemTime now) {
  const CampaignJob& job = *service.job;
  switch (service.state) {
    case ServiceState::starting:
      return "starting for " + format_short_duration(between(job.start, now));
    case ServiceState::ready:
      return fmt::format("ready since {} ({})", format_local_time(*job.ready_at).substr(11),
                         format_short_duration(between(*job.ready_at, now)));
    case ServiceState::stopped:
      return job.end ? "stopped at " + format_local_time(*job.end).substr(11) : "stopped";
    case ServiceState::failed:
      return "failed: " + describe_end(job);
    case ServiceState::unknown:
      return describe_end(job);
  }
  return describe_end(job);
}

std::string format_services(const std::vector<ServiceStatus>& services, SystemTime now) {
  if (services.empty()) return "";
  struct Row {
    std::string name, job, slot, state, restarts, log;
  };
  std::vector<Row> rows{{"SERVICE", "JOB", "SLOT", "STATE", "RESTARTS", "LOG"}};
  for (const ServiceStatus& service : services)
    rows.push_back({service.name, fmt::format("#{}", service.job->id), service.job->slot,
                    describe_service_state(service, now), std::to_string(service.restarts),
                    service.log});
  std::array<std::size_t, 4> width{};
  for (const Row& row : rows) {
    width[0] = std::max(width[0], row.name.size());
    width[1] = std::max(width[1], row.job.size());
    width[2] = std::max(width[2], row.slot.size());
    width[3] = std::max(width[3], row.state.size());
  }
  std::string text;
  for (const Row& row : rows)
    text += fmt::format("{}  {}  {}  {}  {:>8}  {}\n", pad_to_columns(row.name, width[0]),
                        pad_to_columns(row.job, width[1]), pad_to_columns(row.slot, width[2]),
                        pad_to_columns(row.state, width[3]), row.restarts, row.log);
  return text;
}

nlohmann::ordered_json services_json(const std::vector<ServiceStatus>& services, SystemTime now) {
  using nlohmann::ordered_json;
  ordered_json list = ordered_json::array();
  for (const ServiceStatus& service : services) {
    const CampaignJob& job = *service.job;
    ordered_json variables = ordered_json::object();
    for (const auto& [name, value] : job.ready_variables) variables[name] = value;
    list.push_back(
        {{"id", job.id},
         {"name", service.name},
         {"slot", job.slot},
         {"host", job.host},
         {"state", std::string(service_state_name(service.state))},
         {"started", format_utc_time(job.start)},
         {"ready_since", job.ready_at ? ordered_json(format_utc_time(*job.ready_at)) : nullptr},
         {"ready_ms", job.ready_at && !job.end ? ordered_json(between(*job.ready_at, now).count())
                                               : nullptr},
         {"ended", job.end ? ordered_json(format_utc_time(*job.end)) : nullptr},
         {"end", job.end ? ordered_json(describe_end(job)) : nullptr},
         {"restarts", service.restarts},
         {"variables", std::move(variables)},
         {"pgid", job.pgid},
         {"log", service.log}});
  }
  return list;
}

}  // namespace runner
