// The report's services section: every service of the shown runs, apart
// from the jobs, and why those that failed did.
#include "html_services.h"

#include <fmt/format.h>

#include "runner/report/html_report.h"

namespace runner {

std::string_view service_css_class(ServiceState state) {
  switch (state) {
    case ServiceState::starting:
    case ServiceState::ready:
      return "running";
    case ServiceState::stopped:
      return "ok";
    case ServiceState::failed:
      return "failed";
    case ServiceState::unknown:
      return "unknown";
  }
  return "unknown";
}

std::string html_services_section(const std::vector<ServiceStatus>& services,
                                  const std::vector<std::optional<std::string>>& log_tails,
                                  SystemTime now) {
  std::string out = fmt::format(
      "<h2>Services ({})</h2>\n<table id=\"services\"><thead><tr><th>service</th>"
      "<th class=\"num\">job</th><th>slot</th><th>state</th><th class=\"num\">restarts</th>"
      "<th>log</th></tr></thead><tbody>\n",
      services.size());
  for (const ServiceStatus& service : services) {
    const CampaignJob& job = *service.job;
    out += fmt::format(
        "<tr><td>{}</td><td class=\"num\">#{}</td><td>{}</td><td><span class=\"tag {}\">{}"
        "</span> {}</td><td class=\"num\">{}</td><td><code>{}</code></td></tr>\n",
        html_escape(service.name), job.id, html_escape(job.slot),
        service_css_class(service.state), service_state_name(service.state),
        html_escape(describe_service_state(service, now)), service.restarts,
        html_escape(service.log));
  }
  out += "</tbody></table>\n";
  for (std::size_t i = 0; i < services.size() && i < log_tails.size(); ++i) {
    if (!log_tails[i]) continue;
    const ServiceStatus& service = services[i];
    out += fmt::format(
        "<details id=\"failure-{}\" open><summary><span class=\"tag failed\">#{}</span> "
        "service {} [{}] {}</summary>\n<pre class=\"cmd\">{}</pre>\n",
        service.job->id, service.job->id, html_escape(service.name),
        html_escape(service.job->slot), html_escape(describe_service_state(service, now)),
        html_escape(service.job->command));
    out += log_tails[i]->empty()
               ? std::string("<p class=\"muted\">The log is empty.</p>\n")
               : "<pre class=\"log\">" + html_escape(*log_tails[i]) + "</pre>\n";
    out += "</details>\n";
  }
  return out;
}

}  // namespace runner
