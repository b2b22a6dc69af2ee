// `runner check`: connect to every host as a run would, and print one line
// per host: reachable or not (and why), how it authenticated, its host key,
// the round trip, and the GPUs `nvidia-smi -L` lists. Exits 1 when a host is
// not usable. Threading: none; one event loop drives every executor.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>

#include "fatal.h"
#include "host_probe.h"
#include "runner/cli/options.h"
#include "runner/config/hosts.h"
#include "runner/core/printable.h"
#include "runner/probe/gpu_listing.h"
#include "runner/ui/console.h"
#include "subcommand.h"

namespace runner {

namespace {

// The `gpu` values hosts.yaml gives this host's slots that nvidia-smi does not list.
std::vector<std::string> missing_gpus(const Fleet& fleet, const Host& host,
                                      const std::vector<DetectedGpu>& gpus) {
  std::set<std::string> listed;
  for (const DetectedGpu& gpu : gpus) listed.insert(gpu.index);
  std::vector<std::string> missing;
  for (int slot : host.slots) {
    for (const auto& [name, value] : fleet.slots[slot].params) {
      if (name != "gpu") continue;
      bool number = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
      if (number && !listed.count(value) &&
          std::find(missing.begin(), missing.end(), value) == missing.end()) {
        missing.push_back(value);
      }
    }
  }
  return missing;
}

// One host's line, and whether it is usable. What the host said in it
// (its GPUs' names, its errors) is printable().
std::pair<std::string, bool> check_line(const Fleet& fleet, int host, const HostProbe& probe) {
  const Host& entry = fleet.hosts[host];
  if (!probe.answered)
    return {printable(fmt::format("{}: FAILED: {}", entry.name, probe.failure)), false};
  std::vector<std::string> parts = {"ok"};
  if (probe.ssh) {
    parts.push_back(probe.ssh->endpoint);
    parts.push_back(probe.ssh->auth);
    parts.push_back("host key " + probe.ssh->host_key);
    if (probe.ssh->round_trip)
      parts.push_back(fmt::format("rtt {:.1f} ms", probe.ssh->round_trip->count() / 1000.0));
  } else {
    parts.push_back("local");
  }
  GpuAnswer answer = read_gpu_answer(probe);
  bool usable = answer.kind == GpuAnswer::Kind::listed ||
                answer.kind == GpuAnswer::Kind::no_nvidia_smi;
  if (!usable) parts.front() = "FAILED";
  if (answer.kind == GpuAnswer::Kind::cannot_run) {
    parts.push_back("cannot run commands: " + answer.why);
  } else if (answer.kind == GpuAnswer::Kind::no_nvidia_smi) {
    parts.push_back("no nvidia-smi");
  } else if (answer.kind == GpuAnswer::Kind::failed) {
    parts.push_back(fmt::format("nvidia-smi -L failed ({})", answer.why));
  } else {
    std::vector<std::string> names;
    for (const DetectedGpu& gpu : answer.gpus) names.push_back(gpu.index + " " + gpu.name);
    parts.push_back(answer.gpus.empty()
                        ? "nvidia-smi lists no GPUs"
                        : fmt::format("{} GPU{}: {}", answer.gpus.size(),
                                      answer.gpus.size() == 1 ? "" : "s", fmt::join(names, ", ")));
    std::vector<std::string> missing = missing_gpus(fleet, entry, answer.gpus);
    if (!missing.empty())
      parts.push_back(fmt::format("but hosts.yaml names gpu {}, which nvidia-smi does not list",
                                  fmt::join(missing, ", ")));
  }
  return {printable(fmt::format("{}: {}", entry.name, fmt::join(parts, ", "))), usable};
}

}  // namespace

int check_hosts(const CheckOptions& options) {
  if (options.net) return check_network(options);
  signal(SIGPIPE, SIG_IGN);
  Fleet fleet = value_or_fatal(load_hosts(options.hosts_file));
  Console console(stdout, stderr, ColorMode::never, 1);
  for (const std::string& repeat : repeated_slot_warnings(fleet, options.hosts_file))
    console.warn(repeat);
  std::shared_ptr<SshContext> context =
      prepare_ssh(fleet, options.ssh, [&](const std::string& note) { console.warn(note); });

  // Lines are printed in hosts.yaml's order, each as soon as those before it are.
  std::vector<std::optional<std::pair<std::string, bool>>> lines(fleet.hosts.size());
  std::size_t printed = 0;
  std::size_t unusable = 0;
  probe_hosts(fleet, context, k_list_gpus, options.ssh.connect_timeout, options.probe_timeout,
              [&](int host, const HostProbe& probe) {
                lines[host] = check_line(fleet, host, probe);
                while (printed < lines.size() && lines[printed]) {
                  fmt::print(stdout, "{}\n", lines[printed]->first);
                  std::fflush(stdout);
                  if (!lines[printed]->second) ++unusable;
                  ++printed;
                }
              });
  if (unusable > 0) {
    console.error(fmt::format("{} of {} hosts not usable", unusable, lines.size()));
    return 1;
  }
  return 0;
}

Subcommand add_check_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<CheckOptions>();
  take(defaults.hosts_file, options->hosts_file);
  take_ssh(defaults, options->ssh);
  auto* check = app.add_subcommand(
      "check", "Connect to every host as a run would; print how, and the GPUs nvidia-smi lists");
  check->add_option("-H,--hosts-file", options->hosts_file, "The fleet (default: hosts.yaml)")
      ->envname(k_hosts_file_env);
  check->add_flag("--net", options->net,
                  "Check instead that every host reaches every other over TCP, as the ranks of a "
                  "multi-node job must: print each host's interfaces and addresses, which of "
                  "them answered each other host (a listener on a free port from 29400 up, for "
                  "the check only, with python3, perl or nc), and warnings (no path, a path only "
                  "over docker0/lo/virbr*/veth*, an unreachable master address); exit 1 when a "
                  "pair cannot be shown to connect");
  add_ssh_flags(*check, options->ssh);
  set_example(*check,
              "runner check --hosts-file hosts.yaml\n  runner check --net --hosts-file hosts.yaml");
  return {check, [options] { return check_hosts(*options); }};
}

}  // namespace runner
