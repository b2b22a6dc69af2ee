// A campaign's GPU power over time, beside the journal:
// state_dir/gpu_power.jsonl, a line per GPU per stretch of time that the
// run's GPU monitor read, {"host": "node01", "gpu": "0", "from_ms": ...,
// "to_ms": ..., "w": 212.5} (times in ms since the epoch, the GPU's mean
// power over them), written by the run and drawn by `runner report`; each
// run appends. Bounded: past its size limit nothing more is written.
// Written and read back by this one definition.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/file_system.h"
#include "runner/core/status.h"

namespace runner {

// A GPU's mean power over a stretch of time.
struct GpuPowerPoint {
  std::string host;
  std::string gpu;  // its index on the host
  std::chrono::system_clock::time_point from;
  std::chrono::system_clock::time_point to;
  double watts = 0;
};

// The file's size limit: 10 s stretches of 8 GPUs for about ten days.
inline constexpr std::uintmax_t k_gpu_power_series_bytes = 64u << 20;

// `state_dir/gpu_power.jsonl`
std::string gpu_power_series_path(const std::string& state_dir);

// One line of the file (with its newline), and the point a line is: nullopt
// for a line that is not one, or whose times no run can have written.
std::string gpu_power_line(const GpuPowerPoint& point);
std::optional<GpuPowerPoint> gpu_power_point(std::string_view line);

// Appends points to the file.
class GpuPowerSeriesWriter {
 public:
  // Appends to `path`, opened (created) with the first point.
  explicit GpuPowerSeriesWriter(std::string path, std::uintmax_t limit = k_gpu_power_series_bytes);

  // An error once the point would take the file past its limit (it is
  // not written, nor any later one) or the write failed.
  [[nodiscard]] Status append(const GpuPowerPoint& point);

 private:
  [[nodiscard]] Status open();

  std::string m_path;
  std::uintmax_t m_limit;
  std::uintmax_t m_size = 0;
  FileDescriptor m_file;
};

// The file's whole lines that are points, in file order; none when it does
// not exist. Only its first size limit's bytes count.
std::vector<GpuPowerPoint> read_gpu_power_series(const std::string& path);

}  // namespace runner
