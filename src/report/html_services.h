// Private to the report area: the services section of `runner report`'s
// page (service_status.h): one row per service with its state, restarts
// and log, and the log tail of each that failed. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/report/service_status.h"

namespace runner {

// The colour class of a service's attempt: "running" while it starts or is
// ready, "ok" once stopped, "failed", "unknown".
std::string_view service_css_class(ServiceState state);

// "<h2>Services …</h2>" and <table id="services">, then a <details
// id="failure-ID"> with its log tail for each failed service; `log_tails`
// has one entry per service (nullopt: not shown).
std::string html_services_section(const std::vector<ServiceStatus>& services,
                                  const std::vector<std::optional<std::string>>& log_tails,
                                  SystemTime now);

}  // namespace runner
