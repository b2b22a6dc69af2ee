// `runner hosts --detect HOST...`: asks each host which GPUs it has
// (`nvidia-smi -L`, over the connections a run would make) and prints the
// hosts.yaml that gives each GPU a slot, or writes it where there is none
// yet. Threading: none.
#include <fmt/format.h>
#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "fatal.h"
#include "host_probe.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/config/detected_hosts.h"
#include "runner/config/hosts.h"
#include "runner/core/printable.h"
#include "runner/probe/gpu_listing.h"
#include "runner/ui/console.h"
#include "subcommand.h"

namespace runner {

namespace {

// What a host's answer says of its GPUs; false when it cannot be used.
bool read_answer(const HostProbe& probe, DetectedHost& host) {
  GpuAnswer answer = read_gpu_answer(probe);
  switch (answer.kind) {
    case GpuAnswer::Kind::unreachable:
      host.note = answer.why;
      return false;
    case GpuAnswer::Kind::cannot_run:
      host.note = "cannot run commands: " + answer.why;
      return false;
    case GpuAnswer::Kind::no_nvidia_smi:
      host.note = "no nvidia-smi: one slot";
      return true;
    case GpuAnswer::Kind::failed:
      host.note = fmt::format("nvidia-smi -L failed ({}): one slot", answer.why);
      return true;
    case GpuAnswer::Kind::listed:
      host.gpus = std::move(answer.gpus);
      if (host.gpus.empty()) host.note = "nvidia-smi lists no GPUs: one slot";
      return true;
  }
  return false;
}

}  // namespace

int detect_hosts(const HostsOptions& options) {
  signal(SIGPIPE, SIG_IGN);
  Console console(stdout, stderr, ColorMode::never, 1);
  if (options.write && std::filesystem::exists(options.hosts_file))
    throw ConfigError(options.hosts_file, 0, 0,
                      "exists already, and runner does not overwrite it; run without --write "
                      "to print the detected fleet, and merge it by hand");
  std::vector<DetectedHost> hosts;
  for (const std::string& name : options.hosts) hosts.push_back({name, {}, {}});
  Fleet fleet = value_or_fatal(parse_hosts(detected_hosts_yaml(hosts), "the command line"));
  std::shared_ptr<SshContext> context =
      prepare_ssh(fleet, options.ssh, [&](const std::string& note) { console.warn(note); });
  int unreachable = 0;
  probe_hosts(fleet, context, k_list_gpus, options.ssh.connect_timeout, options.probe_timeout,
              [&](int host, const HostProbe& probe) {
                if (!read_answer(probe, hosts[host])) {
                  ++unreachable;
                  console.error(
                      printable(fmt::format("{}: {}", hosts[host].hostname, hosts[host].note)));
                }
              });
  if (unreachable > 0) {
    console.error(fmt::format("{} of {} hosts did not answer; nothing written", unreachable,
                              hosts.size()));
    return 1;
  }
  std::string text = detected_hosts_yaml(hosts);
  if (!options.write) {
    fmt::print(stdout, "{}", text);
    return 0;
  }
  std::string partial = options.hosts_file + ".partial";
  std::ofstream(partial) << text;
  std::error_code error;
  if (std::filesystem::file_size(partial, error) != text.size() || error)
    throw ConfigError(partial, 0, 0, "cannot be written, so neither is " + options.hosts_file);
  std::filesystem::rename(partial, options.hosts_file);
  std::size_t slots = 0;
  for (const DetectedHost& host : hosts) slots += std::max<std::size_t>(host.gpus.size(), 1);
  console.info(fmt::format("wrote {}: {} host{}, {} slot{}", options.hosts_file, hosts.size(),
                           hosts.size() == 1 ? "" : "s", slots, slots == 1 ? "" : "s"));
  return 0;
}

Subcommand add_hosts_command(CLI::App& app, const UserDefaults& defaults) {
  // `--detect` sets nothing: it is required, and the only thing the command does.
  struct HostsCommand {
    HostsOptions options;
    bool detect = false;
  };
  auto command = std::make_shared<HostsCommand>();
  take_ssh(defaults, command->options.ssh);
  auto* hosts = app.add_subcommand(
      "hosts", "Ask hosts which GPUs they have (nvidia-smi -L) and print the hosts.yaml for them");
  hosts->add_flag("--detect", command->detect, "Ask the hosts named (required)")->required();
  hosts->add_option("host", command->options.hosts, "Hosts as hosts.yaml names them")->required();
  hosts->add_flag("--write", command->options.write,
                  "Write it to --hosts-file instead of printing it (never over an existing file)");
  hosts->add_option("-H,--hosts-file", command->options.hosts_file,
                    "Where --write writes (default: hosts.yaml)");
  add_ssh_flags(*hosts, command->options.ssh);
  set_example(*hosts, "runner hosts --detect node01 node02 user@node03:2222 > hosts.yaml");
  return {hosts, [command] { return detect_hosts(command->options); }};
}

}  // namespace runner
