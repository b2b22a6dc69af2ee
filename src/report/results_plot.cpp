// The results table turned into a line plot's series.
#include "runner/report/results_plot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

namespace runner {

namespace {

std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

std::size_t position(std::vector<std::string>& names, const std::string& name) {
  auto at = std::find(names.begin(), names.end(), name);
  if (at != names.end()) return static_cast<std::size_t>(at - names.begin());
  names.push_back(name);
  return names.size() - 1;
}

}  // namespace

std::optional<PlotRequest> parse_plot_request(std::string_view text) {
  PlotRequest request;
  std::string* parts[] = {&request.metric, &request.x, &request.series};
  std::size_t part = 0;
  for (char c : text) {
    if (c != ':') {
      parts[part]->push_back(c);
    } else if (++part == std::size(parts)) {
      return std::nullopt;
    }
  }
  if (request.metric.empty() || request.x.empty() || (part == 2 && request.series.empty()) ||
      part == 0)
    return std::nullopt;
  return request;
}

Result<LinePlot> results_plot(const ResultsTable& table, const PlotRequest& request) {
  std::vector<std::string> wanted = {request.metric, request.x};
  if (!request.series.empty()) wanted.push_back(request.series);
  std::vector<std::size_t> columns;
  for (const std::string& name : wanted) {
    std::optional<std::size_t> column = table.column(name);
    if (!column)
      return Status::error(fmt::format("the results have no column `{}`; they have: {}", name,
                                       fmt::join(table.columns, ", ")));
    columns.push_back(*column);
  }

  // Rows with a number to plot: their x text, y and series.
  struct Point {
    std::string x;
    double y;
    std::string series;
  };
  std::vector<Point> points;
  bool numeric_x = true;
  for (const auto& row : table.rows) {
    std::optional<double> y = number(row[columns[0]]);
    if (!y) continue;
    points.push_back({row[columns[1]], *y, request.series.empty() ? "" : row[columns[2]]});
    numeric_x = numeric_x && number(points.back().x);
  }

  LinePlot plot;
  plot.title = request.series.empty() ? fmt::format("{} by {}", request.metric, request.x)
                                      : fmt::format("{} by {}, one line per {}", request.metric,
                                                    request.x, request.series);
  plot.x_label = request.x;
  plot.y_label = request.metric;
  std::vector<std::string> series_names;
  for (const Point& point : points) {
    std::size_t s = position(series_names, point.series);
    if (s == plot.series.size())
      plot.series.push_back(PlotSeries{
          request.series.empty() ? request.metric : request.series + "=" + point.series, {}});
    double x =
        numeric_x ? *number(point.x) : static_cast<double>(position(plot.x_categories, point.x));
    plot.series[s].points.emplace_back(x, point.y);
  }
  for (PlotSeries& series : plot.series)
    std::stable_sort(series.points.begin(), series.points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  return plot;
}

}  // namespace runner
