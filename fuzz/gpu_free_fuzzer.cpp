// A hosts.yaml entry's `gpu_free:` value: parse_gpu_free, then the reason
// it gives for a GPU in use.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/config/gpu_free.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  runner::Result<runner::GpuFreeRule> rule = runner::parse_gpu_free(text);
  if (rule)
    runner::gpu_busy_reason(*rule, runner::GpuUsage{.memory_used_mib = 3172, .processes = 2});
  return 0;
}
