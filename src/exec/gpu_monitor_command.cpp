#include "runner/exec/gpu_monitor_command.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
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
        line = "%.6f, %d, %s, %.3f, %d, %d" % (time.time(), i, uuid.value.decode("ascii", "replace"), watts.value / 1000, use.gpu, mem.used >> 20)
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

bool is_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The number that all of `text` is, if it is one.
template <typename Number>
std::optional<Number> number(std::string_view text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A finite number that is not negative, or nullopt.
std::optional<double> amount(std::string_view text) {
  std::optional<double> value = number<double>(text);
  if (!value || !std::isfinite(*value) || *value < 0) return std::nullopt;
  return value;
}

// nvidia-smi's "YYYY/MM/DD HH:MM:SS.mmm", as seconds since the epoch were
// it UTC.
std::optional<double> calendar_seconds(std::string_view text) {
  if (text.size() < 19 || text[4] != '/' || text[7] != '/' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':')
    return std::nullopt;
  auto year = number<int>(text.substr(0, 4));
  auto month = number<unsigned>(text.substr(5, 2));
  auto day = number<unsigned>(text.substr(8, 2));
  auto hour = number<int>(text.substr(11, 2));
  auto minute = number<int>(text.substr(14, 2));
  auto second = number<double>(text.substr(17));
  if (!year || !month || !day || !hour || !minute || !second || *hour > 23 || *minute > 59 ||
      !(*second >= 0 && *second < 61))
    return std::nullopt;
  std::chrono::year_month_day date{std::chrono::year(*year), std::chrono::month(*month),
                                   std::chrono::day(*day)};
  if (!date.ok()) return std::nullopt;
  auto days = std::chrono::sys_days(date).time_since_epoch().count();
  return static_cast<double>(days) * 86400 + *hour * 3600 + *minute * 60 + *second;
}

// When the host read the GPU: seconds since the epoch, or nvidia-smi's
// calendar time.
std::optional<Clock::time_point> host_time(std::string_view text) {
  std::optional<double> seconds =
      text.find('/') == std::string_view::npos ? number<double>(text) : calendar_seconds(text);
  // Up to 2096: far enough, and in nanoseconds well within Clock's range.
  if (!seconds || !std::isfinite(*seconds) || *seconds < 0 || *seconds > 4e9) return std::nullopt;
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*seconds)));
}

// A field's text as a message quotes it, bounded.
std::string quoted(std::string_view text) {
  return std::string(text.substr(0, 24)) + (text.size() > 24 ? "..." : "");
}

bool is_uuid(std::string_view text) {
  return !text.empty() && text.size() <= 96 &&
         text.find_first_not_of("abcdefABCDEF0123456789-GPUMIG/") == std::string_view::npos;
}

// Why a power reading that is a number is no GPU's, if it is not.
std::string power_refusal(std::string_view text) {
  std::optional<double> watts = number<double>(text);
  if (!watts || (std::isfinite(*watts) && *watts >= 0 && *watts <= k_max_gpu_power_w)) return "";
  return fmt::format("power {} W is no GPU's (0 to {} W)", quoted(text), k_max_gpu_power_w);
}

}  // namespace

std::string gpu_monitor_command(std::chrono::milliseconds period) {
  long ms = std::max<long>(period.count(), 1);
  return fmt::format(
      "command -v nvidia-smi >/dev/null 2>&1 || exit {0}; "
      "if command -v python3 >/dev/null 2>&1; then python3 -c {1} {2}; status=$?; "
      "[ $status -eq 3 ] || exit $status; fi; "
      "exec nvidia-smi --query-gpu=timestamp,index,uuid,power.draw,utilization.gpu,memory.used "
      "--format=csv,noheader,nounits -lms {2}",
      k_no_nvidia_smi, shell_quote(k_nvml_script), ms);
}

GpuLine parse_gpu_line(std::string_view line) {
  std::vector<std::string_view> fields = fields_of(line);
  if (fields.size() != 6 && fields.size() != 7) return {};
  std::optional<Clock::time_point> at = host_time(fields[0]);
  if (!at || !is_digits(fields[1]) || !is_uuid(fields[2])) return {};
  std::optional<int> index = fields[1].size() <= 2 ? number<int>(fields[1]) : std::nullopt;
  if (!index || *index >= k_max_gpus_per_host)
    return {std::nullopt, fmt::format("GPU index {} is beyond the {} a host may have",
                                      quoted(fields[1]), k_max_gpus_per_host)};
  if (std::string why = power_refusal(fields[3]); !why.empty()) return {std::nullopt, why};
  std::optional<double> power = amount(fields[3]);
  std::optional<double> util = amount(fields[4]);
  std::optional<double> memory = amount(fields[5]);
  if (!power || !util || !memory || *util > 100) return {};
  GpuReading reading{std::to_string(*index), std::string(fields[2]), {}};
  reading.sample.at = *at;
  reading.sample.power_w = *power;
  reading.sample.util_percent = *util;
  reading.sample.memory_mib = *memory;
  if (fields.size() == 7) {
    reading.sample.energy_mj = amount(fields[6]);
    if (!reading.sample.energy_mj) return {};
  }
  return {std::move(reading), ""};
}

std::optional<GpuReading> parse_gpu_reading(std::string_view line) {
  return parse_gpu_line(line).reading;
}

}  // namespace runner
