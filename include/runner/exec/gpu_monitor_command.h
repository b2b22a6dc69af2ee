// The long-lived command that reports a host's GPUs while jobs run there,
// and its lines read back. Pure.
//
// Where python3 and NVML (libnvidia-ml.so.1) are, a python3 script reads
// NVML through ctypes: each GPU's energy counter
// (nvmlDeviceGetTotalEnergyConsumption, Volta and newer), power,
// utilisation and memory used, every period; elsewhere `nvidia-smi
// --query-gpu=... -lms` samples power, utilisation and memory. Both print
// a line per GPU and sample: "time, index, uuid, power W, util %, memory
// MiB" and, from NVML where the GPU has it, ", energy mJ". The time is the
// host's own, when it read the GPU: seconds since the epoch from the
// script, nvidia-smi's "YYYY/MM/DD HH:MM:SS.mmm" (its local time, read as
// if UTC: the reader only needs a clock that keeps in step with the
// host's). Nothing is installed on the host: the script is the command's
// own argument.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "runner/config/gpu_energy.h"

namespace runner {

// The command for a sampling period of `period`; it exits 127 where there
// is no nvidia-smi.
std::string gpu_monitor_command(std::chrono::milliseconds period);

// Exit status of gpu_monitor_command where the host has no nvidia-smi.
inline constexpr int k_no_nvidia_smi = 127;

// A host has at most this many GPUs: a higher index is no GPU's.
inline constexpr int k_max_gpus_per_host = 64;

// One line of the monitor: which GPU, and its reading, `at` on the host's
// clock (time since its epoch).
struct GpuReading {
  std::string index;
  std::string uuid;
  GpuSample sample;
};

// A line of gpu_monitor_command's output read back: a reading; or, for a
// line shaped as one whose values no GPU has (an index from
// k_max_gpus_per_host on, power that is not a number, negative or above
// k_max_gpu_power_w), why it is refused; or neither, for anything else (a
// header, a warning, "[N/A]" readings, a cut line).
struct GpuLine {
  std::optional<GpuReading> reading;
  std::string refused;
};
GpuLine parse_gpu_line(std::string_view line);

// parse_gpu_line's reading, if any.
std::optional<GpuReading> parse_gpu_reading(std::string_view line);

}  // namespace runner
