#include "html_gpu_power.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "runner/ui/summary.h"

namespace runner {

namespace {

constexpr double k_label_width = 180;
constexpr double k_chart_width = 1000;
constexpr double k_lane_height = 36;
constexpr double k_lane_gap = 4;

double per_gpu_power(const GpuFigures& gpu) {
  return gpu.power_mean_w / std::max(1, gpu.gpus);
}

}  // namespace

std::string html_gpu_power_section(const HtmlReportModel& model) {
  // The lanes: the slots that have a bar of a job with figures, in order.
  std::map<std::size_t, std::size_t> lane_of_row;
  double highest = 0;
  for (const ReportJob& shown : model.jobs) {
    if (!shown.job->gpu) continue;
    highest = std::max(highest, per_gpu_power(*shown.job->gpu));
    for (const ReportBar& bar : shown.bars) lane_of_row.emplace(bar.row, 0);
  }
  if (lane_of_row.empty()) return "";
  std::size_t lanes = 0;
  for (auto& [row, lane] : lane_of_row) lane = lanes++;

  double span = std::max<double>(1000, static_cast<double>(time_between(model.t0, model.t1).count()));
  auto x_of = [&](SystemTime t) {
    return k_label_width +
           k_chart_width * static_cast<double>(time_between(model.t0, t).count()) / span;
  };
  double height = (k_lane_height + k_lane_gap) * static_cast<double>(lanes) + 8;
  std::string out = fmt::format(
      "<h2>GPU power</h2>\n<div class=\"legend\"><span>a lane per GPU slot; each job's bar as "
      "high as its mean power per GPU (full height: {:.0f} W); hover a bar for its figures"
      "</span></div>\n"
      R"(<svg id="gpu-power" viewBox="0 0 {:.0f} {:.0f}" role="img" )"
      R"(aria-label="one lane per slot, a job's bar as high as its mean power">)",
      highest, k_label_width + k_chart_width + 8, height);
  auto out_it = std::back_inserter(out);
  for (const auto& [row, lane] : lane_of_row) {
    double top = (k_lane_height + k_lane_gap) * static_cast<double>(lane) + 4;
    fmt::format_to(out_it,
                   R"(<rect class="band" x="{:.0f}" y="{:.1f}" width="{:.0f}" height="{:.0f}"/>)"
                   R"(<text class="label" x="{:.0f}" y="{:.1f}" text-anchor="end">{}</text>)",
                   k_label_width, top, k_chart_width, k_lane_height, k_label_width - 8,
                   top + k_lane_height / 2 + 4, html_escape(model.slots[row].label));
  }
  for (const ReportJob& shown : model.jobs) {
    if (!shown.job->gpu) continue;
    const GpuFigures& gpu = *shown.job->gpu;
    double watts = per_gpu_power(gpu);
    double bar_height = highest > 0 ? k_lane_height * watts / highest : 0;
    std::string title = html_escape(fmt::format(
        "#{} [{}] {:.0f} W mean, {:.0f} W peak, {}, {:.0f} % utilisation, {:.0f} MiB peak{}",
        shown.job->id, shown.job->slot, gpu.power_mean_w, gpu.power_max_w,
        format_energy(gpu.energy_j), gpu.util_mean, gpu.memory_max_mib,
        gpu.gpus > 1 ? fmt::format(" ({} GPUs)", gpu.gpus) : ""));
    for (const ReportBar& bar : shown.bars) {
      double top = (k_lane_height + k_lane_gap) * static_cast<double>(lane_of_row[bar.row]) + 4;
      double x = x_of(bar.start);
      fmt::format_to(out_it,
                     R"(<rect class="power" x="{:.2f}" y="{:.1f}" width="{:.2f}" )"
                     R"(height="{:.1f}"><title>{}</title></rect>)",
                     x, top + k_lane_height - bar_height,
                     std::max(0.8, x_of(shown.end) - x), bar_height, title);
    }
  }
  out += "</svg>\n";
  return out;
}

}  // namespace runner
