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

// The points of `points` as at most k_max_series_points: groups of
// neighbours as one, at their time-weighted mean power.
std::vector<GpuPowerPoint> thinned(std::vector<GpuPowerPoint> points) {
  if (points.size() <= k_max_series_points) return points;
  std::size_t group = (points.size() + k_max_series_points - 1) / k_max_series_points;
  std::vector<GpuPowerPoint> fewer;
  for (std::size_t first = 0; first < points.size(); first += group) {
    std::size_t end = std::min(points.size(), first + group);
    GpuPowerPoint merged = points[first];
    merged.to = points[end - 1].to;
    double joules = 0, seconds = 0;
    for (std::size_t i = first; i < end; ++i) {
      double span = std::chrono::duration<double>(points[i].to - points[i].from).count();
      joules += points[i].watts * span;
      seconds += span;
    }
    if (seconds > 0) merged.watts = joules / seconds;
    fewer.push_back(merged);
  }
  return fewer;
}

double per_gpu_power(const GpuFigures& gpu) {
  return gpu.power_mean_w / std::max(1, gpu.gpus);
}

// The x of `t` on the timeline's span.
double x_on_timeline(const HtmlReportModel& model, SystemTime t) {
  double span =
      std::max<double>(1000, static_cast<double>(time_between(model.t0, model.t1).count()));
  return k_label_width +
         k_chart_width * static_cast<double>(time_between(model.t0, t).count()) / span;
}

}  // namespace

std::string html_gpu_power_series_section(const HtmlReportModel& model,
                                          const std::vector<GpuPowerPoint>& points) {
  std::map<std::pair<std::string, std::string>, std::vector<GpuPowerPoint>> by_gpu;
  for (const GpuPowerPoint& point : points)
    if (point.to > model.t0 && point.from < model.t1)
      by_gpu[{point.host, point.gpu}].push_back(point);
  if (by_gpu.empty()) return "";
  double highest = 0;
  for (auto& [gpu, series] : by_gpu) {
    std::sort(series.begin(), series.end(),
              [](const GpuPowerPoint& a, const GpuPowerPoint& b) { return a.from < b.from; });
    series = thinned(std::move(series));
    for (const GpuPowerPoint& point : series) highest = std::max(highest, point.watts);
  }
  double height = (k_lane_height + k_lane_gap) * static_cast<double>(by_gpu.size()) + 8;
  std::string out = fmt::format(
      "<h2>GPU power over time</h2>\n<div class=\"legend\"><span>a lane per GPU: its mean power "
      "over each stretch its monitor recorded (full height: {:.0f} W)</span></div>\n"
      R"(<svg id="gpu-power-series" viewBox="0 0 {:.0f} {:.0f}" role="img" )"
      R"(aria-label="one lane per GPU, its power over time">)",
      highest, k_label_width + k_chart_width + 8, height);
  auto out_it = std::back_inserter(out);
  std::size_t lane = 0;
  for (const auto& [gpu, series] : by_gpu) {
    double top = (k_lane_height + k_lane_gap) * static_cast<double>(lane++) + 4;
    fmt::format_to(out_it,
                   R"(<rect class="band" x="{:.0f}" y="{:.1f}" width="{:.0f}" height="{:.0f}"/>)"
                   R"(<text class="label" x="{:.0f}" y="{:.1f}" text-anchor="end">{} gpu {}</text>)"
                   R"(<polyline class="gpu-series" data-gpu="{}:{}" data-points="{}" points=")",
                   k_label_width, top, k_chart_width, k_lane_height, k_label_width - 8,
                   top + k_lane_height / 2 + 4, html_escape(gpu.first), html_escape(gpu.second),
                   html_escape(gpu.first), html_escape(gpu.second), series.size());
    for (const GpuPowerPoint& point : series) {
      double x = x_on_timeline(model, point.from + (point.to - point.from) / 2);
      double y = top + k_lane_height - (highest > 0 ? k_lane_height * point.watts / highest : 0);
      fmt::format_to(out_it, "{}{:.2f},{:.1f}", &point == &series.front() ? "" : " ", x, y);
    }
    out += "\"/>";
  }
  out += "</svg>\n";
  return out;
}

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

  auto x_of = [&](SystemTime t) { return x_on_timeline(model, t); };
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
