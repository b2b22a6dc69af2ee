#include "run_fleet.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "fatal.h"
#include "runner/config/config_error.h"
#include "runner/exec/slurm/slurm_backend.h"

namespace runner {

namespace {

// Slot i of each allocation node gets the parameters slot i of the host of
// the same name in hosts.yaml has, those it has not already (`gpu`).
void add_host_parameters(Fleet& fleet, const Fleet& hosts) {
  for (const Host& host : fleet.hosts) {
    auto named = std::find_if(hosts.hosts.begin(), hosts.hosts.end(),
                              [&](const Host& h) { return h.name == host.name; });
    if (named == hosts.hosts.end()) continue;
    for (std::size_t i = 0; i < host.slots.size() && i < named->slots.size(); ++i) {
      Params& params = fleet.slots[host.slots[i]].params;
      for (const auto& [key, value] : hosts.slots[named->slots[i]].params)
        if (!find_param(params, key)) params.emplace_back(key, value);
    }
  }
}

}  // namespace

RunFleet load_run_fleet(const RunOptions& options,
                        const std::function<void(const std::string&)>& warn) {
  RunFleet run;
  if (options.slurm) {
    Result<SlurmAllocation> allocation = read_slurm_allocation();
    if (!allocation) throw ConfigError(allocation.status().message());
    run.fleet = slurm_fleet(*allocation, options.slots_per_node);
    run.allocation = std::move(*allocation);
    // A hosts.yaml beside the queue adds parameters to the nodes it names.
    if (std::filesystem::exists(options.hosts_file))
      add_host_parameters(run.fleet, value_or_fatal(load_hosts(options.hosts_file)));
    for (std::size_t h = 0; h < run.allocation->nodes.size(); ++h) {
      const SlurmNode& node = run.allocation->nodes[h];
      if (options.slots_per_node > 0 || node.gpus.empty() ||
          slot_share(node, run.fleet, static_cast<int>(h)))
        continue;
      warn(fmt::format("{}: the allocation holds {} CPU{} there for {} GPUs, so its steps share "
                       "the node and see all its GPUs (<<gpu>> says which is a job's); ask for a "
                       "CPU per GPU (--cpus-per-gpu=1) for Slurm to give each step its own",
                       node.name, node.cpus, node.cpus == 1 ? "" : "s", node.gpus.size()));
    }
    return run;
  }
  run.fleet = value_or_fatal(load_hosts(options.hosts_file));
  for (const std::string& repeat : repeated_slot_warnings(run.fleet, options.hosts_file))
    warn(repeat);
  return run;
}

std::unique_ptr<Backend> make_run_backend(const RunFleet& fleet, std::shared_ptr<SshContext> ssh) {
  if (fleet.allocation) return std::make_unique<SlurmBackend>(*fleet.allocation, fleet.fleet);
  return std::make_unique<FleetBackend>(fleet.fleet, std::move(ssh));
}

std::string describe_slurm_fleet(const RunFleet& fleet) {
  std::string text = fmt::format("Slurm job {}:", fleet.allocation->job_id);
  for (const Host& host : fleet.fleet.hosts) {
    std::vector<std::string> slots;
    for (int s : host.slots) {
      const Slot& slot = fleet.fleet.slots[s];
      std::string params;
      for (const auto& [key, value] : slot.params) params += fmt::format("{}={}", key, value);
      slots.push_back(params.empty() ? fmt::format("#{}", slot.index) : params);
    }
    text += fmt::format(" {} ({}),", host.name, fmt::join(slots, ", "));
  }
  text.back() = '\n';
  return text;
}

}  // namespace runner
