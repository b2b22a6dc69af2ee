// A line plot as inline SVG (no script, nothing fetched), for the results
// section of `runner report`: one <path class="series"> per series, axes
// with tick labels, a legend. Pure.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace runner {

// One line: its points, drawn in the order given.
struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // x, y
};

struct LinePlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  // Non-empty: x is categorical, a point's x the index of its category here.
  std::vector<std::string> x_categories;
  std::vector<PlotSeries> series;
};

// The plot as one <svg> element, to be inlined in HTML (no namespace). Only the series are <path>
// elements; axes and ticks are <line>, points <circle>.
std::string svg_line_plot(const LinePlot& plot);

// About `count` round tick values ("nice numbers": 1, 2 or 5 times a power
// of ten apart) covering [low, high].
std::vector<double> nice_ticks(double low, double high, int count = 5);

}  // namespace runner
