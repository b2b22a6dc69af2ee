// The services of a run (`service:` entries: processes that keep their
// slots until the run ends), as `runner status` and `runner report` show
// them, apart from the jobs: each one's name, slot, state, restarts and
// log. Pure: read from the campaign (campaign.h), whose service jobs carry
// their journal's `service` and `service_ready`.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/report/campaign.h"

namespace runner {

// Where a service is: started and not ready yet, ready, stopped by the
// runner (or ended well while it was being stopped), failed (ended on its
// own, or was not ready in time), or unknown (its run is gone).
enum class ServiceState { starting, ready, stopped, failed, unknown };

// "starting", "ready", "stopped", "failed", "unknown"
std::string_view service_state_name(ServiceState state);

// The state of one attempt of a service job.
ServiceState service_attempt_state(const CampaignJob& attempt);

// One service of a run: a job of `service:` (in broadcast, one per slot).
struct ServiceStatus {
  const CampaignJob* job = nullptr;  // its latest attempt
  std::string name;                  // "dht"; "#3" for `service: true`
  ServiceState state = ServiceState::starting;
  int restarts = 0;  // attempts before the latest (`restart: on-failure`, a lost host)
  std::string log;   // its log, every attempt's
};

// The services of `run` (one of campaign.runs), in start order.
std::vector<ServiceStatus> run_services(const Campaign& campaign, const CampaignRun& run);

// Its state for people, at `now`: "starting for 4s", "ready since 12:34:56
// (2m 03s)", "stopped at 12:40:01", "failed: exit 1", "unknown: the runner
// stopped before it ended".
std::string describe_service_state(const ServiceStatus& service, SystemTime now);

// The status table's services section, every line ending in '\n':
//   SERVICE  JOB  SLOT             STATE                         RESTARTS  LOG
//   dht      #1   localhost gpu=0  ready since 12:34:56 (2m 03s)        0  …/logs/1.log
// empty when there are none.
std::string format_services(const std::vector<ServiceStatus>& services, SystemTime now);

// The same as a JSON array (docs/watching.md documents its keys).
nlohmann::ordered_json services_json(const std::vector<ServiceStatus>& services, SystemTime now);

}  // namespace runner
