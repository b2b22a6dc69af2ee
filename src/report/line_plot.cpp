// The SVG line plot: scales, ticks, axes, one path per series with its
// points and their bars, legend.
#include "runner/report/line_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "runner/report/html_report.h"

namespace runner {

namespace {

constexpr double k_plot_width = 550;  // left margin and plot area
constexpr double k_height = 380;
constexpr double k_left = 70;
constexpr double k_legend_width = 170;       // the legend's room, at least
constexpr double k_legend_char_width = 6.2;  // about, at 11px
constexpr double k_legend_max_width = 360;
constexpr double k_top = 34;
constexpr double k_bottom = 56;
constexpr const char* k_colours[] = {"#1a73e8", "#d93025", "#2e9d5b", "#f29900",
                                     "#9334e6", "#12b5cb", "#e52592", "#5f6368"};

struct Scale {
  double low = 0;
  double high = 1;
  double from = 0;  // pixels
  double to = 1;
  double at(double value) const {
    return high == low ? (from + to) / 2 : from + (value - low) / (high - low) * (to - from);
  }
};

std::string number_label(double value) {
  if (std::abs(value) < 1e-12) value = 0;
  return fmt::format("{:g}", value);
}

// The range the axis shows: the ticks' when they are numeric.
std::pair<double, double> extent(const std::vector<double>& values) {
  if (values.empty()) return {0, 1};
  auto [low, high] = std::minmax_element(values.begin(), values.end());
  return {*low, *high};
}

}  // namespace

std::vector<double> nice_ticks(double low, double high, int count) {
  if (!(high > low)) return {low};
  double raw = (high - low) / std::max(1, count);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    step = factor * power;
    if (step >= raw) break;
  }
  std::vector<double> ticks;
  for (double tick = std::floor(low / step) * step; tick <= high + step * 1e-9; tick += step)
    if (tick >= low - step * 1e-9) ticks.push_back(tick);
  if (ticks.empty() || ticks.front() > low)
    ticks.insert(ticks.begin(), std::floor(low / step) * step);
  if (ticks.back() < high) ticks.push_back(ticks.back() + step);
  return ticks;
}

namespace {

// Room for the legend's longest name.
double legend_width(const LinePlot& plot) {
  std::size_t longest = 0;
  for (const PlotSeries& series : plot.series) longest = std::max(longest, series.name.size());
  return std::clamp(48 + k_legend_char_width * static_cast<double>(longest), k_legend_width,
                    k_legend_max_width);
}

// What a point's tooltip says: "model=a, batch 8: 20 (mean of 3, 18 to 22)".
std::string point_title(const LinePlot& plot, const PlotSeries& series, const PlotPoint& point) {
  std::string x = plot.x_categories.empty()
                      ? number_label(point.x)
                      : plot.x_categories.at(static_cast<std::size_t>(point.x));
  std::string title =
      fmt::format("{}, {} {}: {}", series.name, plot.x_label, x, number_label(point.y));
  if (point.count > 1)
    title += fmt::format(" (mean of {}, {} to {})", point.count, number_label(point.low),
                         number_label(point.high));
  return title;
}

}  // namespace

std::string svg_line_plot(const LinePlot& plot) {
  std::vector<double> xs;
  std::vector<double> ys;
  for (const PlotSeries& series : plot.series)
    for (const PlotPoint& point : series.points) {
      xs.push_back(point.x);
      ys.push_back(point.low);
      ys.push_back(point.high);
    }
  if (plot.reference_y) ys.push_back(*plot.reference_y);
  auto [y_low, y_high] = extent(ys);
  double legend = legend_width(plot);
  double width = k_plot_width + legend;
  std::vector<double> y_ticks = nice_ticks(std::min(0.0, y_low), y_high);
  Scale y{y_ticks.front(), y_ticks.back(), k_height - k_bottom, k_top};
  std::vector<double> x_ticks;
  std::vector<std::string> x_labels;
  if (plot.x_categories.empty()) {
    auto [x_low, x_high] = extent(xs);
    x_ticks = nice_ticks(x_low, x_high);
    for (double tick : x_ticks) x_labels.push_back(number_label(tick));
  } else {
    for (std::size_t i = 0; i < plot.x_categories.size(); ++i) {
      x_ticks.push_back(static_cast<double>(i));
      x_labels.push_back(plot.x_categories[i]);
    }
  }
  Scale x{x_ticks.front(), x_ticks.back(), k_left, k_plot_width};
  if (!plot.x_categories.empty()) {  // room for the first and last category
    x.low -= 0.5;
    x.high += 0.5;
  }

  std::string out = fmt::format(
      "<svg class=\"plot\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"{}\">\n<text class=\"label\" x=\"{}\" y=\"18\">{}</text>\n",
      width, k_height, html_escape(plot.title), k_left, html_escape(plot.title));
  double bottom = k_height - k_bottom;
  double right = k_plot_width;
  for (double tick : y_ticks)
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        k_left, y.at(tick), right, k_left - 6, y.at(tick) + 4, number_label(tick));
  for (std::size_t i = 0; i < x_ticks.size(); ++i)
    out += fmt::format(
        "<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" "
        "stroke=\"#5f6368\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x.at(x_ticks[i]), bottom, bottom + 5, bottom + 18, html_escape(x_labels[i]));
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#5f6368\"/>"
      "<line class=\"axis\" x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"#5f6368\"/>\n"
      "<text class=\"label\" x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">{6}</text>\n"
      "<text class=\"label\" transform=\"translate(16 {7}) rotate(-90)\" "
      "text-anchor=\"middle\">{8}</text>\n",
      k_left, bottom, right, k_top, (k_left + right) / 2, k_height - 14, html_escape(plot.x_label),
      (k_top + bottom) / 2, html_escape(plot.y_label));

  if (plot.reference_y)
    out += fmt::format(
        "<line class=\"reference\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" "
        "stroke=\"#5f6368\" stroke-dasharray=\"5 4\"/>\n",
        k_left, y.at(*plot.reference_y), right);

  for (std::size_t s = 0; s < plot.series.size(); ++s) {
    const PlotSeries& series = plot.series[s];
    const char* colour = k_colours[s % std::size(k_colours)];
    std::string d;
    for (const PlotPoint& point : series.points)
      d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "M" : " L", x.at(point.x), y.at(point.y));
    out += fmt::format(
        "<path class=\"series\" data-series=\"{0}\" d=\"{1}\" fill=\"none\" stroke=\"{2}\" "
        "stroke-width=\"2\"/>\n",
        html_escape(series.name), d, colour);
    for (const PlotPoint& point : series.points) {
      double px = x.at(point.x);
      if (point.high > point.low)  // a bar from the least value to the most, with caps
        out += fmt::format(
            "<polyline class=\"whisker\" points=\"{0:.1f},{1:.1f} {2:.1f},{1:.1f} {3:.1f},{1:.1f} "
            "{3:.1f},{4:.1f} {0:.1f},{4:.1f} {2:.1f},{4:.1f}\" fill=\"none\" stroke=\"{5}\" "
            "stroke-width=\"1.5\"/>",
            px - 4, y.at(point.low), px + 4, px, y.at(point.high), colour);
      out += fmt::format(
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}</title></circle>", px,
          y.at(point.y), colour, html_escape(point_title(plot, series, point)));
    }
    double legend_y = k_top + 8 + 18 * static_cast<double>(s);
    out += fmt::format(
        "\n<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"3\"/><text class=\"label\" x=\"{4}\" y=\"{5:.1f}\">{6}</text>\n",
        right + 16, legend_y, right + 36, colour, right + 42, legend_y + 4,
        html_escape(series.name));
  }
  return out + "</svg>\n";
}

}  // namespace runner
