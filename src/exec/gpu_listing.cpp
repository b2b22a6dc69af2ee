#include "runner/exec/gpu_listing.h"

#include "runner/core/lines.h"

namespace runner {

std::vector<DetectedGpu> parse_gpu_listing(std::string_view listing) {
  std::vector<DetectedGpu> gpus;
  for_each_line(listing, [&](std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    std::size_t colon = line.find(':');
    if (line.rfind("GPU ", 0) != 0 || colon == std::string_view::npos) return;
    DetectedGpu gpu;
    gpu.index = std::string(line.substr(4, colon - 4));
    std::string_view name = line.substr(colon + 1);
    if (std::size_t uuid = name.find(" (UUID: "); uuid != std::string_view::npos) {
      std::string_view rest = name.substr(uuid + 8);
      if (!rest.empty() && rest.back() == ')') rest.remove_suffix(1);
      gpu.uuid = std::string(rest);
      name = name.substr(0, uuid);
    }
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    gpu.name = std::string(name);
    gpus.push_back(std::move(gpu));
  });
  return gpus;
}

}  // namespace runner
