// The results plot of a sweep over model × batch × fusion: lines by several
// parameters, rows picked with --where, points of several jobs drawn as their
// mean with min and max, a warning when the jobs of one point differ in a
// parameter, and a metric relative to a baseline configuration.
#include "runner/report/results_plot.h"

#include <gtest/gtest.h>

#include "runner/report/results_where.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::count;

ResultsTable sweep() {
  return ResultsTable{{"id", "model", "batch", "fusion", "throughput"},
                      {{"1", "a", "8", "on", "20"},
                       {"2", "a", "8", "off", "10"},
                       {"3", "a", "16", "on", "40"},
                       {"4", "a", "16", "off", "16"},
                       {"5", "b", "8", "on", "12"},
                       {"6", "b", "8", "off", "12"},
                       {"7", "b", "16", "on", "30"},
                       {"8", "b", "16", "off", "10"}},
                      {"model", "batch", "fusion"}};
}

PlotPoint point(double x, double y) { return PlotPoint{x, y, y, y, 1}; }

LinePlot plotted(const ResultsTable& table, std::string_view request) {
  std::optional<PlotRequest> parsed = parse_plot_request(request);
  EXPECT_TRUE(parsed) << request;
  Result<LinePlot> plot = results_plot(table, parsed ? *parsed : PlotRequest{});
  EXPECT_TRUE(plot.ok()) << plot.status().message();
  return plot.ok() ? *plot : LinePlot{};
}

TEST(PlotRequest, SeriesBySeveralColumnsAndAMetricRelativeToABaseline) {
  std::optional<PlotRequest> request = parse_plot_request("throughput:batch:model,fusion");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->series, (std::vector<std::string>{"model", "fusion"}));
  EXPECT_FALSE(request->baseline);

  request = parse_plot_request("throughput/fusion=off:batch:model");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->metric, "throughput");
  ASSERT_TRUE(request->baseline);
  EXPECT_EQ(request->baseline->column, "fusion");
  EXPECT_EQ(request->baseline->value, "off");
  EXPECT_EQ(plot_request_text(*request), "throughput/fusion=off:batch:model");

  // A slash without `=` after it is part of the metric's name.
  EXPECT_EQ(parse_plot_request("tokens/s:batch")->metric, "tokens/s");
  for (const char* bad : {"a:b:c,", "a:b:,c", "a/x=:b", "a/=off:b", "/x=1:b"})
    EXPECT_FALSE(parse_plot_request(bad)) << bad;
}

TEST(ResultsPlot, OneLinePerCombinationOfTheSeriesColumns) {
  LinePlot plot = plotted(sweep(), "throughput:batch:model,fusion");
  ASSERT_EQ(plot.series.size(), 4u);
  EXPECT_EQ(plot.series[0].name, "model=a, fusion=on");
  EXPECT_EQ(plot.series[0].points, (std::vector<PlotPoint>{point(8, 20), point(16, 40)}));
  EXPECT_EQ(plot.series[3].name, "model=b, fusion=off");
  EXPECT_EQ(plot.series[3].points, (std::vector<PlotPoint>{point(8, 12), point(16, 10)}));
  EXPECT_EQ(plot.title, "throughput by batch, one line per model, fusion");
  EXPECT_TRUE(plot.warnings.empty());
}

TEST(ResultsPlot, JobsOfOnePointThatDifferInAParameterAreTheirMeanAndAWarningSaysWhichDiffers) {
  LinePlot plot = plotted(sweep(), "throughput:batch:fusion");
  ASSERT_EQ(plot.series.size(), 2u);
  EXPECT_EQ(plot.series[0].name, "fusion=on");
  EXPECT_EQ(plot.series[0].points,
            (std::vector<PlotPoint>{{8, 16, 12, 20, 2}, {16, 35, 30, 40, 2}}));
  ASSERT_EQ(plot.warnings.size(), 1u);
  EXPECT_EQ(plot.warnings[0],
            "the jobs of one point differ in model (a, b); each point is their mean, with a bar "
            "from the least to the most: add model to the lines (throughput:batch:fusion,model) "
            "or keep one with --where model=a");
  std::string svg = svg_line_plot(plot);
  EXPECT_EQ(count(svg, "<path"), 2);
  EXPECT_EQ(count(svg, "class=\"whisker\""), 4) << svg;
}

TEST(ResultsPlot, RepeatedJobsOfOneConfigurationAreTheirMeanWithMinAndMaxWithoutWarning) {
  ResultsTable table = sweep();
  table.rows.push_back({"9", "a", "8", "on", "22"});
  table.rows.push_back({"10", "a", "8", "on", "18"});
  LinePlot plot = plotted(table, "throughput:batch:model,fusion");
  ASSERT_EQ(plot.series.size(), 4u);
  EXPECT_EQ(plot.series[0].points, (std::vector<PlotPoint>{{8, 20, 18, 22, 3}, point(16, 40)}));
  EXPECT_TRUE(plot.warnings.empty());
  ASSERT_EQ(plot.notes.size(), 1u);
  EXPECT_EQ(plot.notes[0],
            "A point of several jobs is their mean, with a bar from the least to the most.");
  std::string svg = svg_line_plot(plot);
  EXPECT_EQ(count(svg, "class=\"whisker\""), 1) << svg;
  EXPECT_NE(svg.find("<title>model=a, fusion=on, batch 8: 20 (mean of 3, 18 to 22)</title>"),
            std::string::npos)
      << svg;
}

TEST(ResultsPlot, RelativeToABaselineIsEachJobsMetricOverItsBaselinesAtTheSameParameters) {
  LinePlot plot = plotted(sweep(), "throughput/fusion=off:batch:model");
  ASSERT_EQ(plot.series.size(), 2u);  // fusion=off is the baseline, not a point
  EXPECT_EQ(plot.series[0].name, "model=a");
  EXPECT_EQ(plot.series[0].points, (std::vector<PlotPoint>{point(8, 2), point(16, 2.5)}));
  EXPECT_EQ(plot.series[1].points, (std::vector<PlotPoint>{point(8, 1), point(16, 3)}));
  EXPECT_EQ(plot.title, "throughput relative to fusion=off by batch, one line per model");
  EXPECT_EQ(plot.y_label, "throughput relative to fusion=off");
  EXPECT_EQ(plot.reference_y, 1.0);
  EXPECT_TRUE(plot.warnings.empty());
  EXPECT_NE(svg_line_plot(plot).find("class=\"reference\""), std::string::npos);
}

TEST(ResultsPlot, AJobWithoutItsBaselineIsLeftOutAndSaidSo) {
  ResultsTable table = sweep();
  table.rows.push_back({"9", "c", "8", "on", "5"});
  LinePlot plot = plotted(table, "throughput/fusion=off:batch:model");
  ASSERT_EQ(plot.series.size(), 2u);
  ASSERT_EQ(plot.warnings.size(), 1u);
  EXPECT_EQ(plot.warnings[0],
            "1 job has no job of fusion=off and the same other parameters to compare with "
            "(#9); left out");
}

TEST(ResultsPlot, ABaselineNoJobHasIsAnError) {
  Result<LinePlot> plot =
      results_plot(sweep(), *parse_plot_request("throughput/fusion=auto:batch"));
  ASSERT_FALSE(plot.ok());
  EXPECT_EQ(plot.status().message(), "no job has fusion=auto; fusion has: on, off");
}

TEST(RowsWhere, KeepsRowsWithOneOfTheValuesGivenForEachColumnNamed) {
  auto where = [](std::vector<std::string> texts) {
    std::vector<RowCondition> conditions;
    for (const std::string& text : texts) conditions.push_back(*parse_row_condition(text));
    Result<ResultsTable> rows = rows_where(sweep(), conditions);
    EXPECT_TRUE(rows.ok());
    std::vector<std::string> ids;
    for (const auto& row : rows->rows) ids.push_back(row[0]);
    return ids;
  };
  EXPECT_EQ(where({"model=a"}), (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(where({"model=a", "fusion=on"}), (std::vector<std::string>{"1", "3"}));
  EXPECT_EQ(where({"batch=16", "model=a", "model=b"}),
            (std::vector<std::string>{"3", "4", "7", "8"}));
  EXPECT_FALSE(parse_row_condition("model"));
  EXPECT_FALSE(parse_row_condition("=a"));
  EXPECT_EQ(parse_row_condition("note=a=b")->value, "a=b");

  Result<ResultsTable> missing = rows_where(sweep(), {*parse_row_condition("size=1")});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "the results have no column `size`; they have: id, model, batch, fusion, throughput");
  EXPECT_EQ(unmatched_conditions(sweep(), {*parse_row_condition("model=c")}),
            (std::vector<std::string>{"no job has model=c; model has: a, b"}));
}

}  // namespace
}  // namespace runner
