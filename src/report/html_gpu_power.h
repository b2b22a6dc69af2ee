// Private to the report area: the GPU power section of `runner report`'s
// page, under the timeline. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "html_report_model.h"
#include "runner/state/gpu_power_series.h"

namespace runner {

// "<h2>GPU power</h2>" and <svg id="gpu-power">: a lane per slot whose
// jobs' GPUs were read, over the timeline's span, each job a bar as high
// as its mean power per GPU (the highest bar fills its lane), with its
// figures in its title. Empty when no job's GPUs were read.
std::string html_gpu_power_section(const HtmlReportModel& model);

// "<h2>GPU power over time</h2>" and <svg id="gpu-power-series">: a lane
// per GPU that the recorded series has in the timeline's span, each a
// <polyline class="gpu-series" data-gpu="HOST:INDEX" data-points="N">
// through its mean power over each recorded stretch (at most
// k_max_series_points: past them, neighbours are averaged), the highest
// power of all filling a lane. Empty when no GPU has a point in the span.
inline constexpr std::size_t k_max_series_points = 1000;
std::string html_gpu_power_series_section(const HtmlReportModel& model,
                                          const std::vector<GpuPowerPoint>& points);

}  // namespace runner
