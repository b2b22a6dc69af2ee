// The results plot: --plot requests, the table's rows as series, and the
// SVG (one <path> per series, tick labels on both axes).
#include "runner/report/line_plot.h"


#include <gtest/gtest.h>

#include "runner/report/results_plot.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::count;

ResultsTable sweep() {
  return ResultsTable{{"id", "batch", "model", "throughput"},
                      {{"1", "16", "a", "30"},
                       {"2", "8", "a", "20"},
                       {"3", "8", "b", "11"},
                       {"4", "16", "b", ""},
                       {"5", "32", "b", "35.5"},
                       {"6", "32", "c", "n/a"}},
                      {"batch", "model"}};
}

TEST(PlotRequest, IsMetricXAndSeries) {
  std::optional<PlotRequest> request = parse_plot_request("throughput:batch:model");
  ASSERT_TRUE(request);
  EXPECT_EQ(request->metric, "throughput");
  EXPECT_EQ(request->x, "batch");
  EXPECT_EQ(request->series, std::vector<std::string>{"model"});
  EXPECT_TRUE(parse_plot_request("throughput:batch")->series.empty());
  for (const char* bad : {"throughput", "a:b:c:d", ":b", "a::c", "a:b:", ""})
    EXPECT_FALSE(parse_plot_request(bad)) << bad;
}

TEST(ResultsPlot, OneSeriesPerValueWithItsNumericPointsSortedByX) {
  Result<LinePlot> plot = results_plot(sweep(), *parse_plot_request("throughput:batch:model"));
  ASSERT_TRUE(plot.ok());
  ASSERT_EQ(plot->series.size(), 2u);  // c has no number
  EXPECT_EQ(plot->series[0].name, "model=a");
  EXPECT_EQ(plot->series[0].points,
            (std::vector<PlotPoint>{{8, 20, 20, 20, 1}, {16, 30, 30, 30, 1}}));
  EXPECT_EQ(plot->series[1].points,
            (std::vector<PlotPoint>{{8, 11, 11, 11, 1}, {32, 35.5, 35.5, 35.5, 1}}));
  EXPECT_TRUE(plot->x_categories.empty());
}

TEST(ResultsPlot, AnXThatIsNotANumberIsCategorical) {
  Result<LinePlot> plot = results_plot(sweep(), *parse_plot_request("throughput:model"));
  ASSERT_TRUE(plot.ok());
  EXPECT_EQ(plot->x_categories, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(plot->series.size(), 1u);
  EXPECT_EQ(plot->series[0].points.size(), 2u);  // a's jobs and b's, each point their mean
  ASSERT_EQ(plot->warnings.size(), 1u);
  EXPECT_EQ(plot->warnings[0].rfind("the jobs of one point differ in batch (16, 8, 32)", 0), 0u)
      << plot->warnings[0];
}

TEST(ResultsPlot, AMissingColumnIsNamedWithTheColumnsThereAre) {
  Result<LinePlot> plot = results_plot(sweep(), *parse_plot_request("latency:batch:model"));
  ASSERT_FALSE(plot.ok());
  EXPECT_EQ(plot.status().message(),
            "the results have no column `latency`; they have: id, batch, model, throughput");
}

TEST(LinePlot, DrawsOnePathPerSeriesAndLabelsTheTicks) {
  Result<LinePlot> plot = results_plot(sweep(), *parse_plot_request("throughput:batch:model"));
  ASSERT_TRUE(plot.ok());
  std::string svg = svg_line_plot(*plot);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(svg, "<path"), 2);
  EXPECT_EQ(count(svg, "<circle"), 4);
  EXPECT_NE(svg.find(">model=b</text>"), std::string::npos);
  EXPECT_NE(svg.find(">40</text>"), std::string::npos) << svg;  // the top y tick
  EXPECT_NE(svg.find(">35</text>"), std::string::npos);         // the last x tick
  EXPECT_EQ(count(svg, "<script"), 0);
  EXPECT_EQ(count(svg, "http"), 0);  // inline in HTML: no namespace, nothing fetched
}

TEST(LinePlot, EmptyPlotStillHasAxes) {
  std::string svg = svg_line_plot(LinePlot{"t", "x", "y", {}, {}});
  EXPECT_EQ(count(svg, "<path"), 0);
  EXPECT_EQ(count(svg, "class=\"axis\""), 2);
}

TEST(NiceTicks, AreRoundNumbersCoveringTheRange) {
  EXPECT_EQ(nice_ticks(0, 35.5), (std::vector<double>{0, 10, 20, 30, 40}));
  EXPECT_EQ(nice_ticks(8, 32), (std::vector<double>{5, 10, 15, 20, 25, 30, 35}));
  EXPECT_EQ(nice_ticks(3, 3), (std::vector<double>{3}));
}

}  // namespace
}  // namespace runner
