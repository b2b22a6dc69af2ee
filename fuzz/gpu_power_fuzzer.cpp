// A line of gpu_power.jsonl: gpu_power_point must take any line, a point it
// reads is written back as a line that reads as the same point, and any
// host or GPU name (a hostile node's) is written without throwing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "runner/state/gpu_power_series.h"

namespace {

bool same(const runner::GpuPowerPoint& a, const runner::GpuPowerPoint& b) {
  return a.host == b.host && a.gpu == b.gpu && a.from == b.from && a.to == b.to &&
         a.watts == b.watts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string line(reinterpret_cast<const char*>(data), size);
  if (std::optional<runner::GpuPowerPoint> point = runner::gpu_power_point(line)) {
    // Written once, its watts are rounded as the writer rounds them; from
    // then on, what is written reads back the same.
    std::string written = runner::gpu_power_line(*point);
    std::optional<runner::GpuPowerPoint> read = runner::gpu_power_point(written);
    if (!read) std::abort();
    std::optional<runner::GpuPowerPoint> again =
        runner::gpu_power_point(runner::gpu_power_line(*read));
    if (!again || !same(*again, *read)) std::abort();
  }
  runner::GpuPowerPoint named{line, line, {}, {}, 1};
  if (!runner::gpu_power_point(runner::gpu_power_line(named))) std::abort();
  return 0;
}
