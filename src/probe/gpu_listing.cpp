#include "runner/probe/gpu_listing.h"

#include <charconv>

#include "runner/core/lines.h"

namespace runner {

namespace {

// What hosts.yaml and commands may take of a host's answer as it is: a GPU's
// index is a number, its UUID letters, digits and dashes.
bool all_of(std::string_view text, std::string_view allowed) {
  return !text.empty() && text.find_first_not_of(allowed) == std::string_view::npos;
}
constexpr std::string_view k_digits = "0123456789";
constexpr std::string_view k_uuid_characters =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-";

}  // namespace

std::vector<DetectedGpu> parse_gpu_listing(std::string_view listing) {
  std::vector<DetectedGpu> gpus;
  for_each_line(listing, [&](std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    std::size_t colon = line.find(':');
    if (line.rfind("GPU ", 0) != 0 || colon == std::string_view::npos) return;
    DetectedGpu gpu;
    gpu.index = std::string(line.substr(4, colon - 4));
    if (!all_of(gpu.index, k_digits)) return;
    std::string_view name = line.substr(colon + 1);
    if (std::size_t uuid = name.find(" (UUID: "); uuid != std::string_view::npos) {
      std::string_view rest = name.substr(uuid + 8);
      if (!rest.empty() && rest.back() == ')') rest.remove_suffix(1);
      if (all_of(rest, k_uuid_characters)) gpu.uuid = std::string(rest);
      name = name.substr(0, uuid);
    }
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    gpu.name = std::string(name);
    gpus.push_back(std::move(gpu));
  });
  return gpus;
}

namespace {

// "a, b, c" -> {"a", "b", "c"}
std::vector<std::string_view> csv_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  while (true) {
    std::size_t comma = line.find(',');
    std::string_view field = line.substr(0, comma);
    while (!field.empty() && (field.front() == ' ')) field.remove_prefix(1);
    while (!field.empty() && (field.back() == ' ' || field.back() == '\r')) field.remove_suffix(1);
    fields.push_back(field);
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

}  // namespace

std::optional<std::map<std::string, GpuUsage>> parse_gpu_usage(std::string_view text) {
  std::map<std::string, GpuUsage> usage;
  std::map<std::string, std::string, std::less<>> index_of_uuid;
  bool processes = false;
  bool well_formed = true;
  for_each_line(text, [&](std::string_view line) {
    if (line.empty() || line == "\r") return;
    if (line.rfind("---", 0) == 0) {
      processes = true;
      return;
    }
    std::vector<std::string_view> fields = csv_fields(line);
    if (!processes) {
      long used = 0;
      if (fields.size() != 3 || std::from_chars(fields[2].data(), fields[2].data() + fields[2].size(), used).ec != std::errc()) {
        well_formed = false;
        return;
      }
      usage[std::string(fields[0])].memory_used_mib = used;
      index_of_uuid[std::string(fields[1])] = std::string(fields[0]);
    } else if (auto gpu = index_of_uuid.find(fields[0]); gpu != index_of_uuid.end()) {
      ++usage[gpu->second].processes;
    }
  });
  if (!well_formed || !processes) return std::nullopt;
  return usage;
}

}  // namespace runner
