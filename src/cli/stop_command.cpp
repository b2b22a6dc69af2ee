// `runner stop NAME`: stops a service of the live run from another
// terminal. It leaves a request in the state directory, which the running
// runner watches (state/stop_requests.h); the runner stops the service as
// the run's end would (cancel:, TERM, KILL, after:). This command then
// waits until the journal records the service's end.
#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "fatal.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/report/campaign_index.h"
#include "runner/report/service_status.h"
#include "runner/state/state_dir.h"
#include "runner/state/stop_requests.h"
#include "runner/ui/summary.h"
#include "subcommand.h"

namespace runner {

namespace {

constexpr int k_poll_ms = 100;

bool running(ServiceState state) {
  return state == ServiceState::starting || state == ServiceState::ready;
}

bool named(const ServiceStatus& service, const std::string& name) {
  // An unnamed service (`service: true`) goes by its job id alone.
  return (service.job->service == name && name != "true") ||
         fmt::format("#{}", service.job->id) == name;
}

// The running services of `run` that `name` names.
std::vector<ServiceStatus> running_services(const Campaign& campaign, const CampaignRun& run,
                                            const std::string& name) {
  std::vector<ServiceStatus> found;
  for (ServiceStatus& service : run_services(campaign, run))
    if (running(service.state) && (name.empty() || named(service, name)))
      found.push_back(std::move(service));
  return found;
}

}  // namespace

int stop_service(const StopOptions& options) {
  std::string state_dir =
      options.state_dir.empty() ? state_dir_for(options.queue_file) : options.state_dir;
  Campaign campaign = value_or_fatal(load_recent_campaign(state_dir)).campaign;
  const CampaignRun* run = campaign.latest_run();
  if (!run || !run->alive)
    throw ConfigError(state_dir, 0, 0,
                      "no run is going on here, so no service runs; name the campaign with "
                      "--queue-file or --state-dir");
  std::vector<ServiceStatus> asked = running_services(campaign, *run, options.service);
  if (asked.empty()) {
    std::string names;
    for (const ServiceStatus& service : running_services(campaign, *run, ""))
      names += (names.empty() ? "" : ", ") + service.name;
    throw ConfigError(fmt::format(
        "no running service of run {} is named {}; {}", run->id, options.service,
        names.empty() ? "none runs" : "running: " + names));
  }
  if (Status requested = request_stop(state_dir, options.service); !requested.ok())
    throw StateError(requested.message());
  // What is needed of them once the campaign is read again.
  struct Asked {
    JobId id;
    int attempt;
    std::string name;
  };
  std::vector<Asked> waited;
  for (const ServiceStatus& service : asked)
    waited.push_back({service.job->id, service.job->attempt, service.name});
  std::string run_id = run->id;
  long pid = run->pid;

  auto give_up = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(static_cast<long long>(options.timeout * 1000));
  while (true) {
    ::poll(nullptr, 0, k_poll_ms);
    campaign = value_or_fatal(load_recent_campaign(state_dir)).campaign;
    run = campaign.find_run(run_id);
    // Each asked service's attempt, as the journal tells it now.
    bool all_ended = std::all_of(waited.begin(), waited.end(), [&](const Asked& service) {
      const CampaignJob* now = campaign.find_job(service.id);
      return !now || now->attempt != service.attempt || now->end;
    });
    if (all_ended) {
      for (const Asked& service : waited)
        if (const CampaignJob* ended = campaign.find_job(service.id))
          fmt::print(stderr, "runner: service #{} ({}) [{}] stopped: {} after {}\n", ended->id,
                     service.name, ended->slot, describe_end(*ended),
                     format_duration(ended->duration));
      return 0;
    }
    if (!run || !run->alive) {
      fmt::print(stderr,
                 "runner: error: the run {} (pid {}) ended before it recorded the end of the "
                 "service {}\n",
                 run_id, pid, options.service);
      return 1;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      fmt::print(stderr,
                 "runner: error: the service {} still runs after {}s; the run {} (pid {}) was "
                 "asked to stop it (see `runner status`)\n",
                 options.service, options.timeout, run_id, pid);
      return 1;
    }
  }
}

Subcommand add_stop_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<StopOptions>();
  auto* stop = add_campaign_command(
      app, "stop", "Stop a service of the running campaign (its cancel:, TERM, KILL, after:)",
      defaults, options->queue_file, options->state_dir);
  stop->add_option("service", options->service,
                   "The service's name (`service: NAME`), or its job id as #12")
      ->required();
  stop->add_option("--timeout", options->timeout, "Seconds to wait for it to end (default 60)")
      ->check(CLI::PositiveNumber);
  set_example(*stop, "runner stop --queue-file queue.yaml dht");
  return {stop, [options] { return stop_service(*options); }};
}

}  // namespace runner
