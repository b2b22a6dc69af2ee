#include "runner/config/gpu_free.h"

#include <fmt/format.h>

#include <charconv>
#include <vector>

namespace runner {

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// More MiB than any GPU holds (an EiB): an amount above it is a typo.
constexpr double k_most_mib = 1024.0 * 1024 * 1024 * 1024;

// "1GiB", "512 MiB", "2GB", "800": MiB.
std::optional<long> parse_memory(std::string_view text) {
  text = trimmed(text);
  double number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || !(number >= 0)) return std::nullopt;
  std::string_view unit = trimmed(text.substr(end - text.data()));
  double mib = unit.empty() || unit == "MiB" ? number
               : unit == "GiB"               ? number * 1024
               : unit == "MB"                ? number * 1e6 / (1 << 20)
               : unit == "GB"                ? number * 1e9 / (1 << 20)
                                             : -1;
  if (!(mib >= 0 && mib <= k_most_mib)) return std::nullopt;
  return static_cast<long>(mib);
}

std::string memory_text(long mib) {
  return mib >= 1024 ? fmt::format("{:.1f} GiB", mib / 1024.0) : fmt::format("{} MiB", mib);
}

}  // namespace

Result<GpuFreeRule> parse_gpu_free(std::string_view text) {
  GpuFreeRule rule;
  rule.text = std::string(trimmed(text));
  const std::string fix =
      "write `memory < 1GiB`, `no-processes`, or both as `no-processes and memory < 1GiB`";
  std::string_view rest = rule.text;
  while (!rest.empty()) {
    std::size_t joint = rest.find(" and ");
    std::string_view part = trimmed(rest.substr(0, joint));
    rest = joint == std::string_view::npos ? std::string_view() : rest.substr(joint + 5);
    if (part == "no-processes") {
      rule.no_processes = true;
    } else if (part.rfind("memory", 0) == 0 && trimmed(part.substr(6)).rfind('<', 0) == 0) {
      std::optional<long> limit = parse_memory(trimmed(part.substr(6)).substr(1));
      if (!limit)
        return Status::error(fmt::format("`gpu_free`: `{}` is not an amount of memory; {}",
                                         part, fix));
      rule.memory_below_mib = *limit;
    } else {
      return Status::error(fmt::format("`gpu_free`: `{}` is not a condition; {}", part, fix));
    }
  }
  if (!rule.no_processes && !rule.memory_below_mib)
    return Status::error("`gpu_free` is empty; " + fix);
  return rule;
}

std::optional<std::string> gpu_busy_reason(const GpuFreeRule& rule, const GpuUsage& usage) {
  std::vector<std::string> why;
  if (rule.memory_below_mib && usage.memory_used_mib >= *rule.memory_below_mib)
    why.push_back(memory_text(usage.memory_used_mib) + " in use");
  if (rule.no_processes && usage.processes > 0)
    why.push_back(fmt::format("{} process{}", usage.processes, usage.processes == 1 ? "" : "es"));
  if (why.empty()) return std::nullopt;
  return fmt::format("{}", fmt::join(why, ", "));
}

}  // namespace runner
