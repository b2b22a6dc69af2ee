// What nvidia-smi prints: parse_gpu_listing (`-L`) and parse_gpu_usage
// (memory in use and compute processes) on any text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/probe/gpu_listing.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  runner::parse_gpu_listing(text);
  runner::parse_gpu_usage(text);
  return 0;
}
