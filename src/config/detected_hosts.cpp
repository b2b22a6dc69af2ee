#include "runner/config/detected_hosts.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "runner/core/printable.h"

namespace runner {

namespace {

// A scalar as YAML writes it: quoted only where it has to be. yaml-cpp
// leaves a carriage return unquoted, where every reader ends the line:
// text with anything printable() would escape goes in double quotes,
// escaped.
std::string scalar(const std::string& text) {
  YAML::Emitter out;
  if (printable(text) != text) out << YAML::DoubleQuoted;
  out << text;
  return out.c_str();
}

// A comment at the end of a line: what a host said, on that line.
std::string comment(const std::string& text) {
  return text.empty() ? "" : "  # " + printable(text);
}

}  // namespace

std::string detected_hosts_yaml(const std::vector<DetectedHost>& hosts) {
  std::string text;
  for (const DetectedHost& host : hosts) {
    if (host.gpus.empty()) {
      text += fmt::format("- {}{}\n", scalar(host.hostname), comment(host.note));
      continue;
    }
    for (const DetectedGpu& gpu : host.gpus) {
      text += fmt::format("- hostname: {}{}\n  gpu: {}\n", scalar(host.hostname), comment(gpu.name),
                          scalar(gpu.index));
      if (!gpu.uuid.empty()) text += fmt::format("  gpu_uuid: {}\n", scalar(gpu.uuid));
    }
  }
  return text;
}

}  // namespace runner
