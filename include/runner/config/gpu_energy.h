// What a GPU's samples say of a window of time (a job's, on that GPU):
// energy, mean and peak power, mean utilisation, peak memory. Pure.
//
// Between two samples the readings are taken as changing linearly; the
// energy of that stretch is the difference of NVML's energy counter where
// both samples have it and it did not go back (a driver reloaded), else
// the integral of power (trapezoid). Beyond the first and the last sample,
// and on either side of a gap longer than twice `reach`, a sample's
// readings hold for `reach` (its power as the counter says it over the
// stretch beside, where it does); time that no sample reaches is not covered
// (a GPU that disappeared, a monitor that was down), and the figures are
// those of the covered time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/core/clock.h"

namespace runner {

// No GPU draws more than this: a higher reading is no GPU's.
inline constexpr double k_max_gpu_power_w = 5000;

// One reading of one GPU, timed by the clock of the host that read it.
struct GpuSample {
  Clock::time_point at;
  std::optional<double> energy_mj;  // NVML's counter since the driver loaded, where it has one
  double power_w = 0;
  double util_percent = 0;
  double memory_mib = 0;
};

// A job's figures, of one GPU or summed over its GPUs (combined).
struct GpuFigures {
  double energy_j = 0;
  double power_mean_w = 0;  // energy over the covered time
  double power_max_w = 0;
  double util_mean = 0;  // percent, over the covered time
  double memory_max_mib = 0;
  double seconds = 0;  // the covered time (of the longest-covered GPU, once combined)
  int gpus = 0;

  bool operator==(const GpuFigures&) const = default;
};

// The figures of `samples` (in time order) for [from, to]; nullopt when no
// sample reaches any of it.
std::optional<GpuFigures> figures_between(const std::vector<GpuSample>& samples,
                                          Clock::time_point from, Clock::time_point to,
                                          Clock::duration reach);

// Why `after`'s energy counter is not to be believed next to `before`'s
// (the reading of the same GPU before it): it went back, or it says the GPU
// drew more than k_max_gpu_power_w in between; empty where it is, or where
// either has no counter.
std::string counter_refusal(const GpuSample& before, const GpuSample& after);

// Several GPUs' figures as one job's (its GPUs, on all its hosts): energy,
// power and memory summed (peak power: the sum of each GPU's peak),
// utilisation the mean of each GPU's.
GpuFigures combined(const std::vector<GpuFigures>& each);

}  // namespace runner
