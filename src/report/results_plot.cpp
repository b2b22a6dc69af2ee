// The results table turned into a line plot's series: lines by the values
// of some columns, the rows of one line at one x as one point (their mean
// and range), and a metric relative to a baseline configuration.
#include "runner/report/results_plot.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <map>

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

// The pieces of `text` between each `separator`.
std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> pieces(1);
  for (char c : text) {
    if (c == separator)
      pieces.emplace_back();
    else
      pieces.back().push_back(c);
  }
  return pieces;
}

using Row = std::vector<std::string>;

// The cells of a row at these columns, as one key.
std::vector<std::string> cells_at(const Row& row, const std::vector<std::size_t>& columns) {
  std::vector<std::string> cells;
  for (std::size_t column : columns) cells.push_back(row[column]);
  return cells;
}

// A row to draw: its y and which line it belongs to.
struct Drawn {
  const Row* row;
  double y;
  std::size_t series;
};

// The baseline's mean metric for each combination of the other parameters.
class Baselines {
 public:
  Baselines(const ResultsTable& table, std::size_t metric, const RowCondition& baseline)
      : m_column(*table.column(baseline.column)), m_value(baseline.value) {
    for (const std::string& name : table.parameters)
      if (name != baseline.column) m_key.push_back(*table.column(name));
    for (const Row& row : table.rows) {
      std::optional<double> y = number(row[metric]);
      if (!is_baseline(row) || !y) continue;
      auto& [sum, count] = m_sums[cells_at(row, m_key)];
      sum += *y;
      ++count;
    }
  }

  bool is_baseline(const Row& row) const { return row[m_column] == m_value; }

  // The mean of the row's baseline, if it has one that is not 0.
  std::optional<double> of(const Row& row) const {
    auto at = m_sums.find(cells_at(row, m_key));
    if (at == m_sums.end() || at->second.first == 0) return std::nullopt;
    return at->second.first / at->second.second;
  }

 private:
  std::size_t m_column;
  std::string m_value;
  std::vector<std::size_t> m_key;
  std::map<std::vector<std::string>, std::pair<double, int>> m_sums;
};

// The parameters in which the rows of one point differ, each with its
// values (first seen first), in the order of the table's parameters.
using Differences = std::vector<std::pair<std::string, std::vector<std::string>>>;

void add_differences(Differences& differences, const ResultsTable& table,
                     const std::vector<std::string>& ignored, const std::vector<const Row*>& rows) {
  for (const std::string& name : table.parameters) {
    if (std::find(ignored.begin(), ignored.end(), name) != ignored.end()) continue;
    std::size_t column = *table.column(name);
    bool differ = std::any_of(rows.begin(), rows.end(),
                              [&](const Row* row) { return (*row)[column] != (*rows[0])[column]; });
    if (!differ) continue;
    auto at = std::find_if(differences.begin(), differences.end(),
                           [&](const auto& entry) { return entry.first == name; });
    if (at == differences.end()) at = differences.insert(differences.end(), {name, {}});
    for (const Row* row : rows) position(at->second, (*row)[column]);
  }
}

std::string differences_warning(const Differences& differences, const PlotRequest& request) {
  std::vector<std::string> named;
  std::vector<std::string> names;
  std::vector<std::string> wheres;
  for (const auto& [name, values] : differences) {
    named.push_back(fmt::format("{} ({})", name, fmt::join(values, ", ")));
    names.push_back(name);
    wheres.push_back(fmt::format("--where {}={}", name, values.front()));
  }
  PlotRequest wider = request;
  wider.series.insert(wider.series.end(), names.begin(), names.end());
  return fmt::format(
      "the jobs of one point differ in {}; each point is their mean, with a bar from the least "
      "to the most: add {} to the lines ({}) or keep one with {}",
      fmt::join(named, " and "), fmt::join(names, " and "), plot_request_text(wider),
      fmt::join(wheres, " "));
}

std::string left_out_warning(const std::vector<std::string>& ids, const RowCondition& baseline) {
  constexpr std::size_t k_named = 5;
  std::vector<std::string> named(ids.begin(), ids.begin() + std::min(ids.size(), k_named));
  if (ids.size() > k_named) named.push_back("…");
  return fmt::format(
      "{} {} no job of {} and the same other parameters to compare with ({}); left out", ids.size(),
      ids.size() == 1 ? "job has" : "jobs have", row_condition_text(baseline),
      fmt::join(named, ", "));
}

PlotPoint point_of(double x, const std::vector<double>& values) {
  PlotPoint point{x, 0, values.front(), values.front(), static_cast<int>(values.size())};
  for (double value : values) {
    point.y += value;
    point.low = std::min(point.low, value);
    point.high = std::max(point.high, value);
  }
  point.y /= static_cast<double>(values.size());
  return point;
}

}  // namespace

std::optional<PlotRequest> parse_plot_request(std::string_view text) {
  std::vector<std::string> parts = split(text, ':');
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  PlotRequest request;
  request.metric = parts[0];
  request.x = parts[1];
  std::size_t slash = request.metric.rfind('/');
  if (slash != std::string::npos && request.metric.find('=', slash) != std::string::npos) {
    request.baseline = parse_row_condition(std::string_view(request.metric).substr(slash + 1));
    if (!request.baseline || request.baseline->value.empty()) return std::nullopt;
    request.metric.resize(slash);
  }
  if (request.metric.empty() || request.x.empty()) return std::nullopt;
  if (parts.size() == 3) {
    request.series = split(parts[2], ',');
    for (const std::string& name : request.series)
      if (name.empty()) return std::nullopt;
  }
  return request;
}

std::string plot_request_text(const PlotRequest& request) {
  std::string text = request.metric;
  if (request.baseline) text += "/" + row_condition_text(*request.baseline);
  text += ":" + request.x;
  if (!request.series.empty()) text += fmt::format(":{}", fmt::join(request.series, ","));
  return text;
}

Result<LinePlot> results_plot(const ResultsTable& table, const PlotRequest& request) {
  std::vector<std::string> wanted = {request.metric, request.x};
  wanted.insert(wanted.end(), request.series.begin(), request.series.end());
  if (request.baseline) wanted.push_back(request.baseline->column);
  for (const std::string& name : wanted)
    if (Status known = check_column(table, name); !known.ok()) return known;
  std::size_t metric = *table.column(request.metric);
  std::size_t x_column = *table.column(request.x);
  std::vector<std::size_t> series_columns;
  for (const std::string& name : request.series) series_columns.push_back(*table.column(name));
  std::optional<Baselines> baselines;
  if (request.baseline) {
    std::vector<std::string> missing = unmatched_conditions(table, {*request.baseline});
    if (!missing.empty()) return Status::error(missing.front());
    baselines.emplace(table, metric, *request.baseline);
  }

  LinePlot plot;
  std::string y_name = request.metric;
  if (request.baseline) {
    y_name += " relative to " + row_condition_text(*request.baseline);
    plot.reference_y = 1.0;
  }
  plot.y_label = y_name;
  plot.title = fmt::format("{} by {}", y_name, request.x);
  if (!request.series.empty())
    plot.title += fmt::format(", one line per {}", fmt::join(request.series, ", "));
  plot.x_label = request.x;

  // The rows to draw, each with its y and line.
  std::vector<Drawn> drawn;
  std::vector<std::string> left_out;
  std::vector<std::vector<std::string>> series_keys;
  bool numeric_x = true;
  for (const Row& row : table.rows) {
    std::optional<double> y = number(row[metric]);
    if (!y || (baselines && baselines->is_baseline(row))) continue;
    if (baselines) {
      std::optional<double> base = baselines->of(row);
      if (!base) {
        std::optional<std::size_t> id = table.column("id");
        left_out.push_back(id ? "#" + row[*id] : "a row");
        continue;
      }
      *y /= *base;
    }
    std::vector<std::string> key = cells_at(row, series_columns);
    auto at = std::find(series_keys.begin(), series_keys.end(), key);
    if (at == series_keys.end()) at = series_keys.insert(series_keys.end(), key);
    drawn.push_back({&row, *y, static_cast<std::size_t>(at - series_keys.begin())});
    numeric_x = numeric_x && number(row[x_column]);
  }

  // Each line's points: x → the rows there and their values.
  struct AtX {
    std::vector<const Row*> rows;
    std::vector<double> values;
  };
  std::vector<std::map<double, AtX>> lines(series_keys.size());
  for (const Drawn& d : drawn) {
    const std::string& x_text = (*d.row)[x_column];
    double x =
        numeric_x ? *number(x_text) : static_cast<double>(position(plot.x_categories, x_text));
    AtX& at = lines[d.series][x];
    at.rows.push_back(d.row);
    at.values.push_back(d.y);
  }

  std::vector<std::string> ignored = wanted;
  Differences differences;
  bool several = false;
  for (std::size_t s = 0; s < series_keys.size(); ++s) {
    std::vector<std::string> name_parts;
    for (std::size_t i = 0; i < request.series.size(); ++i)
      name_parts.push_back(request.series[i] + "=" + series_keys[s][i]);
    PlotSeries series{
        request.series.empty() ? request.metric : fmt::format("{}", fmt::join(name_parts, ", ")),
        {}};
    for (const auto& [x, at] : lines[s]) {
      series.points.push_back(point_of(x, at.values));
      if (at.rows.size() < 2) continue;
      several = true;
      add_differences(differences, table, ignored, at.rows);
    }
    plot.series.push_back(std::move(series));
  }
  if (several && differences.empty())
    plot.notes.push_back(
        "A point of several jobs is their mean, with a bar from the least to the most.");
  if (!differences.empty()) plot.warnings.push_back(differences_warning(differences, request));
  if (!left_out.empty()) plot.warnings.push_back(left_out_warning(left_out, *request.baseline));
  return plot;
}

}  // namespace runner
