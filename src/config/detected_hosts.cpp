#include "runner/config/detected_hosts.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace runner {

namespace {

// A scalar as YAML writes it: quoted only where it has to be.
std::string scalar(const std::string& text) {
  YAML::Emitter out;
  out << text;
  return out.c_str();
}

}  // namespace

std::string detected_hosts_yaml(const std::vector<DetectedHost>& hosts) {
  std::string text;
  for (const DetectedHost& host : hosts) {
    if (host.gpus.empty()) {
      text += fmt::format("- {}{}\n", scalar(host.hostname),
                          host.note.empty() ? "" : "  # " + host.note);
      continue;
    }
    for (const DetectedGpu& gpu : host.gpus) {
      text += fmt::format("- hostname: {}{}\n  gpu: {}\n", scalar(host.hostname),
                          gpu.name.empty() ? "" : "  # " + gpu.name, scalar(gpu.index));
      if (!gpu.uuid.empty()) text += fmt::format("  gpu_uuid: {}\n", scalar(gpu.uuid));
    }
  }
  return text;
}

}  // namespace runner
