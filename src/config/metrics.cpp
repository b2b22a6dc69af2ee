// Metric patterns: their check, their YAML form in a queue entry, and the
// last value they find in a log. Pure logic.
#include "runner/config/metrics.h"

#include <yaml-cpp/yaml.h>

namespace runner {

Status check_metric_pattern(const std::string& pattern) {
  Result<Pattern> compiled = Pattern::compile(pattern);
  if (!compiled) return Status::error("does not compile (" + compiled.status().message() + ")");
  if (compiled->group_count() == 0) return Status::error("has no capture group");
  return Status();
}

std::string metrics_to_yaml(const Params& metrics) {
  YAML::Emitter out;
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& [name, pattern] : metrics) out << YAML::Key << name << YAML::Value << pattern;
  out << YAML::EndMap;
  return std::string(out.c_str(), out.size());
}

Params metrics_from_yaml(const std::string& text) {
  Params metrics;
  try {
    YAML::Node node = YAML::Load(text);
    if (!node.IsMap()) return metrics;
    for (const auto& pair : node)
      if (pair.first.IsScalar() && pair.second.IsScalar())
        metrics.emplace_back(pair.first.Scalar(), pair.second.Scalar());
  } catch (const YAML::Exception&) {
    return {};
  }
  return metrics;
}

namespace {

// The first group of the last match in `line`; an error when a match ran
// into the pattern's limits.
Result<std::optional<std::string>> last_match_in_line(const Pattern& pattern,
                                                      std::string_view line) {
  std::optional<std::string> found;
  for (std::size_t from = 0; from <= line.size();) {
    Result<std::optional<PatternMatch>> match = pattern.search(line, from);
    if (!match) return match.status();
    if (!*match) break;
    const std::vector<std::optional<std::string>>& groups = (*match)->groups;
    found = groups.empty() ? "" : groups.front().value_or("");
    // An empty match is passed by one character, or it is found again.
    from = (*match)->end > (*match)->begin ? (*match)->end : (*match)->end + 1;
  }
  return found;
}

}  // namespace

MetricMatch last_metric_match(const Pattern& pattern, std::string_view text) {
  // From the last line back: the first line that matches holds the last match.
  MetricMatch result;
  std::size_t end = text.size();
  while (true) {
    std::size_t cut = end == 0 ? std::string_view::npos : text.find_last_of("\r\n", end - 1);
    std::size_t begin = cut == std::string_view::npos ? 0 : cut + 1;
    Result<std::optional<std::string>> found =
        last_match_in_line(pattern, text.substr(begin, end - begin));
    if (!found && result.passed_over.ok()) result.passed_over = found.status();
    if (found && *found) {
      result.value = std::move(*found);
      return result;
    }
    if (cut == std::string_view::npos) return result;
    end = cut;
  }
}

}  // namespace runner
