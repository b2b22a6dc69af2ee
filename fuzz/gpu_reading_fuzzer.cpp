// What a host's GPU monitor prints (nvidia-smi -lms or the NVML script):
// parse_gpu_line on each line of any text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/exec/gpu_monitor_command.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    runner::parse_gpu_line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return 0;
}
