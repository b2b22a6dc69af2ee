// A line plot as inline SVG (no script, nothing fetched), for the results
// section of `runner report`: one <path class="series"> per series, a
// point per x with a bar from the least to the most of its values when it
// has several, axes with tick labels, a legend. Pure.
//
// Threading: none.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace runner {

// One point of a line: the mean of the values at its x, and their range.
struct PlotPoint {
  double x = 0;
  double y = 0;     // the mean
  double low = 0;   // the least value
  double high = 0;  // the most
  int count = 1;    // how many values
  bool operator==(const PlotPoint&) const = default;
};

// One line: its points, drawn in the order given.
struct PlotSeries {
  std::string name;
  std::vector<PlotPoint> points;
};

struct LinePlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  // Non-empty: x is categorical, a point's x the index of its category here.
  std::vector<std::string> x_categories;
  std::vector<PlotSeries> series;
  std::optional<double> reference_y;  // a dashed line across, e.g. at 1 for ratios
  std::vector<std::string> notes;     // how to read it, shown under it
  std::vector<std::string> warnings;  // what it may hide, shown under it and said on stderr
};

// The plot as one <svg> element, to be inlined in HTML (no namespace). Only
// the series are <path> elements; axes, ticks and the bars of points of
// several values (class "whisker") are <line>, points <circle> with a
// <title>.
std::string svg_line_plot(const LinePlot& plot);

// About `count` round tick values ("nice numbers": 1, 2 or 5 times a power
// of ten apart) covering [low, high].
std::vector<double> nice_ticks(double low, double high, int count = 5);

}  // namespace runner
