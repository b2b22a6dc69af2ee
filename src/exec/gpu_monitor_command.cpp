#include "runner/exec/gpu_monitor_command.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <vector>

#include "runner/exec/shell.h"

namespace runner {

namespace {

// Reads NVML through ctypes; exits 3 where NVML cannot be loaded or
// started, so that the command falls back on nvidia-smi. Its one argument
// is the period in milliseconds.
constexpr std::string_view k_nvml_script = R"(import ctypes as C, sys, time
try:
    n = C.CDLL("libnvidia-ml.so.1")
    if n.nvmlInit_v2() != 0: sys.exit(3)
except OSError:
    sys.exit(3)
class Use(C.Structure): _fields_ = [("gpu", C.c_uint), ("memory", C.c_uint)]
class Mem(C.Structure): _fields_ = [("total", C.c_ulonglong), ("free", C.c_ulonglong), ("used", C.c_ulonglong)]
period = float(sys.argv[1]) / 1000
while True:
    count = C.c_uint(0)
    n.nvmlDeviceGetCount_v2(C.byref(count))
    lines = []
    for i in range(count.value):
        h = C.c_void_p()
        if n.nvmlDeviceGetHandleByIndex_v2(i, C.byref(h)) != 0: continue
        uuid = C.create_string_buffer(96)
        watts = C.c_uint(0)
        use = Use()
        mem = Mem()
        energy = C.c_ulonglong(0)
        if n.nvmlDeviceGetUUID(h, uuid, 96) != 0 or n.nvmlDeviceGetPowerUsage(h, C.byref(watts)) != 0: continue
        n.nvmlDeviceGetUtilizationRates(h, C.byref(use))
        n.nvmlDeviceGetMemoryInfo(h, C.byref(mem))
        line = "%d, %s, %.3f, %d, %d" % (i, uuid.value.decode("ascii", "replace"), watts.value / 1000, use.gpu, mem.used >> 20)
        if n.nvmlDeviceGetTotalEnergyConsumption(h, C.byref(energy)) == 0: line += ", %d" % energy.value
        lines.append(line + "\n")
    sys.stdout.write("".join(lines))
    sys.stdout.flush()
    time.sleep(period)
)";

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t begin = 0;
  while (true) {
    std::size_t comma = line.find(',', begin);
    fields.push_back(trimmed(line.substr(begin, comma - begin)));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

// A finite number that is not negative, or nullopt.
std::optional<double> amount(std::string_view text) {
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value < 0)
    return std::nullopt;
  return value;
}

bool is_index(std::string_view text) {
  return !text.empty() && text.size() <= 4 &&
         text.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_uuid(std::string_view text) {
  return !text.empty() && text.size() <= 96 &&
         text.find_first_not_of("abcdefABCDEF0123456789-GPUMIG/") == std::string_view::npos;
}

}  // namespace

std::string gpu_monitor_command(std::chrono::milliseconds period) {
  long ms = std::max<long>(period.count(), 1);
  return fmt::format(
      "command -v nvidia-smi >/dev/null 2>&1 || exit {0}; "
      "if command -v python3 >/dev/null 2>&1; then python3 -c {1} {2}; status=$?; "
      "[ $status -eq 3 ] || exit $status; fi; "
      "exec nvidia-smi --query-gpu=index,uuid,power.draw,utilization.gpu,memory.used "
      "--format=csv,noheader,nounits -lms {2}",
      k_no_nvidia_smi, shell_quote(k_nvml_script), ms);
}

std::optional<GpuReading> parse_gpu_reading(std::string_view line) {
  std::vector<std::string_view> fields = fields_of(line);
  if (fields.size() != 5 && fields.size() != 6) return std::nullopt;
  if (!is_index(fields[0]) || !is_uuid(fields[1])) return std::nullopt;
  std::optional<double> power = amount(fields[2]);
  std::optional<double> util = amount(fields[3]);
  std::optional<double> memory = amount(fields[4]);
  if (!power || !util || !memory || *util > 100) return std::nullopt;
  GpuReading reading{std::string(fields[0]), std::string(fields[1]), {}};
  reading.sample.power_w = *power;
  reading.sample.util_percent = *util;
  reading.sample.memory_mib = *memory;
  if (fields.size() == 6) {
    reading.sample.energy_mj = amount(fields[5]);
    if (!reading.sample.energy_mj) return std::nullopt;
  }
  return reading;
}

}  // namespace runner
