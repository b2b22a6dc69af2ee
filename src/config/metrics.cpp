// Metric patterns: their check, their YAML form in a queue entry, and the
// last value they find in a log. Pure logic.
#include "runner/config/metrics.h"

#include <yaml-cpp/yaml.h>

namespace runner {

Status check_metric_pattern(const std::string& pattern) {
  try {
    std::regex compiled(pattern, std::regex::ECMAScript);
    if (compiled.mark_count() == 0) return Status::error("has no capture group");
    return Status();
  } catch (const std::regex_error& error) {
    return Status::error(std::string("does not compile (") + error.what() + ")");
  }
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

std::optional<std::string> last_metric_match(const std::regex& pattern, std::string_view text) {
  // From the last line back: the first line that matches holds the last match.
  std::size_t end = text.size();
  while (true) {
    std::size_t cut = end == 0 ? std::string_view::npos : text.find_last_of("\r\n", end - 1);
    std::size_t begin = cut == std::string_view::npos ? 0 : cut + 1;
    std::string_view line = text.substr(begin, end - begin);
    std::optional<std::string> found;
    for (std::cregex_iterator it(line.data(), line.data() + line.size(), pattern), stop; it != stop;
         ++it)
      found = (*it)[1].str();
    if (found) return found;
    if (cut == std::string_view::npos) return std::nullopt;
    end = cut;
  }
}

}  // namespace runner
