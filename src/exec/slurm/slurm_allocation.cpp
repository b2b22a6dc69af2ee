// The allocation a run is inside, from SLURM_JOB_ID and scontrol; the
// parsing of scontrol's text is pure and tested on its own.
#include "runner/exec/slurm/slurm_allocation.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>

#include "runner/exec/slurm/program_output.h"

namespace runner {

namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

std::string job_detail_field(std::string_view line, std::string_view key) {
  for (size_t at = 0; (at = line.find(key, at)) != std::string_view::npos; ++at) {
    if (at > 0 && line[at - 1] != ' ') continue;
    size_t start = at + key.size();
    size_t end = line.find_first_of(" \n", start);
    return std::string(line.substr(start, end == std::string_view::npos ? end : end - start));
  }
  return {};
}

std::vector<int> parse_index_list(std::string_view text) {
  std::vector<int> indices;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    size_t dash = part.find('-');
    std::optional<int> first = parse_int(part.substr(0, dash));
    std::optional<int> last =
        dash == std::string_view::npos ? first : parse_int(part.substr(dash + 1));
    if (!first || !last || *last < *first) return {};
    for (int i = *first; i <= *last; ++i) indices.push_back(i);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

std::vector<SlurmGresLine> parse_job_details(std::string_view text) {
  std::vector<SlurmGresLine> lines;
  for (const std::string& line : lines_of(std::string(text))) {
    std::string nodes = job_detail_field(line, "Nodes=");
    if (nodes.empty() || line.find("CPU_IDs=") == std::string::npos) continue;
    SlurmGresLine entry{nodes, {},
                        static_cast<int>(parse_index_list(job_detail_field(line, "CPU_IDs=")).size()),
                        parse_int(job_detail_field(line, "Mem=")).value_or(0)};
    // GRES=gpu:2(IDX:0-1) or GRES=gpu:a100:2(IDX:0,2),nic:1(IDX:0)
    std::string gres = job_detail_field(line, "GRES=");
    for (size_t at = 0; (at = gres.find("gpu", at)) != std::string::npos; ++at) {
      if (at > 0 && gres[at - 1] != ',') continue;
      size_t open = gres.find("(IDX:", at);
      size_t close = gres.find(')', open);
      if (open == std::string::npos || close == std::string::npos) break;
      std::vector<int> gpus = parse_index_list(gres.substr(open + 5, close - open - 5));
      entry.gpus.insert(entry.gpus.end(), gpus.begin(), gpus.end());
    }
    lines.push_back(std::move(entry));
  }
  return lines;
}

std::optional<std::chrono::system_clock::time_point> parse_slurm_time(std::string_view text) {
  std::tm local{};
  std::string copy(text);
  const char* end = strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &local);
  if (!end || *end != '\0') return std::nullopt;
  local.tm_isdst = -1;
  std::time_t seconds = std::mktime(&local);
  if (seconds == -1) return std::nullopt;
  return std::chrono::system_clock::from_time_t(seconds);
}

Result<SlurmAllocation> read_slurm_allocation() {
  const char* job = std::getenv("SLURM_JOB_ID");
  if (!job || !*job)
    return Status::error(
        "--slurm: SLURM_JOB_ID is not set; run inside an allocation (salloc or sbatch)");
  SlurmAllocation allocation{job, {}};
  const char* node_list = std::getenv("SLURM_JOB_NODELIST");
  Result<std::string> details = program_output({"scontrol", "show", "job", "-d", job});
  if (!details) return Status::error("--slurm: " + details.status().message());
  std::string nodes = node_list && *node_list ? node_list : job_detail_field(*details, "NodeList=");
  Result<std::string> names = program_output({"scontrol", "show", "hostnames", nodes});
  if (!names) return Status::error("--slurm: " + names.status().message());
  std::map<std::string, SlurmGresLine> held;  // by node name
  for (const SlurmGresLine& line : parse_job_details(*details)) {
    Result<std::string> its = program_output({"scontrol", "show", "hostnames", line.nodes});
    if (!its) return Status::error("--slurm: " + its.status().message());
    for (const std::string& name : lines_of(*its)) held[name] = line;
  }
  for (const std::string& name : lines_of(*names))
    allocation.nodes.push_back({name, held[name].gpus, held[name].cpus, held[name].memory_mb});
  allocation.ends_at = parse_slurm_time(job_detail_field(*details, "EndTime="));
  if (allocation.nodes.empty())
    return Status::error(fmt::format("--slurm: job {} has no nodes", job));
  return allocation;
}

Fleet slurm_fleet(const SlurmAllocation& allocation, int slots_per_node) {
  Fleet fleet;
  for (const SlurmNode& node : allocation.nodes) {
    int host = static_cast<int>(fleet.hosts.size());
    fleet.hosts.push_back({node.name, {"", node.name, 0, false}, {}, 0});
    int count = slots_per_node > 0 ? slots_per_node : std::max<int>(1, node.gpus.size());
    bool per_gpu = slots_per_node <= 0 && !node.gpus.empty();
    for (int i = 0; i < count; ++i) {
      Slot slot;
      slot.host = host;
      slot.index = i;
      if (per_gpu) {
        slot.params.emplace_back("gpu", std::to_string(node.gpus[i]));
        slot.label = fmt::format("{} gpu={}", node.name, node.gpus[i]);
      } else {
        slot.label = count > 1 ? fmt::format("{} #{}", node.name, i) : node.name;
      }
      fleet.hosts.back().slots.push_back(static_cast<int>(fleet.slots.size()));
      fleet.slots.push_back(std::move(slot));
    }
  }
  return fleet;
}

std::optional<SlotShare> slot_share(const SlurmNode& node, const Fleet& fleet, int host) {
  const std::vector<int>& slots = fleet.hosts[host].slots;
  int count = static_cast<int>(slots.size());
  if (node.gpus.empty() || count != static_cast<int>(node.gpus.size())) return std::nullopt;
  for (int i = 0; i < count; ++i) {
    std::optional<std::string> gpu = find_param(fleet.slots[slots[i]].params, "gpu");
    if (!gpu || *gpu != std::to_string(node.gpus[i])) return std::nullopt;
  }
  if (node.cpus < count) return std::nullopt;
  return SlotShare{node.cpus / count, node.memory_mb / count};
}

}  // namespace runner
