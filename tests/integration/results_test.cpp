// `runner results` and the report's plot with the real binary: a sweep on
// two local slots whose jobs print their throughput, read back as one table.
#include <gtest/gtest.h>

#include <sstream>

#include "support/headless_chromium.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct Results : ::testing::Test {
  TempDir dir;

  void SetUp() override {
    dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
    dir.write("queue.yaml",
              "- command: \"echo throughput: 1; echo throughput: <<batch>>0 <<model>>\"\n"
              "  model: [a, b]\n"
              "  batch: [1, 2]\n"
              "  metrics: {throughput: 'throughput: ([0-9.]+)'}\n");
  }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
};

// Each CSV line with its slot and duration (which vary from run to run) blanked.
std::string without_slot_and_duration(const std::string& csv) {
  std::istringstream lines(csv);
  std::string out;
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (cells.size() > 6) cells[4] = cells[7] = "";
    for (std::size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cells[i];
    out += "\n";
  }
  return out;
}

TEST_F(Results, TableOfASweepWithTheMetricItsJobsPrinted) {
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  ProcessResult results = runner({"results"});
  ASSERT_EQ(results.status, 0) << results.err;
  EXPECT_EQ(without_slot_and_duration(results.out),
            "id,batch,model,host,,outcome,exit,,attempts,throughput\n"
            "1,1,a,localhost,,succeeded,0,,1,10\n"
            "2,2,a,localhost,,succeeded,0,,1,20\n"
            "3,1,b,localhost,,succeeded,0,,1,10\n"
            "4,2,b,localhost,,succeeded,0,,1,20\n")
      << results.out;

  ProcessResult markdown = runner({"results", "--format", "markdown"});
  ASSERT_EQ(markdown.status, 0) << markdown.err;
  EXPECT_EQ(testing::count(markdown.out, "\n"), 6);
  EXPECT_EQ(markdown.out.rfind("| id | batch | model | host | slot |", 0), 0u) << markdown.out;

  ProcessResult report = runner({"report", "--plot", "throughput:batch:model", "-o", "-"});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_EQ(testing::count(report.out, "<path class=\"series\""), 2);
  EXPECT_NE(report.out.find("<table id=\"results\">"), std::string::npos);

  ProcessResult bad = runner({"report", "--plot", "latency:batch:model", "-o", "-"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("no column `latency`"), std::string::npos) << bad.err;
}

TEST_F(Results, ARegexWithoutCaptureGroupIsRefusedBeforeAnythingRuns) {
  dir.write("queue.yaml",
            "- command: echo hi\n"
            "  metrics:\n"
            "    throughput: 'throughput: [0-9]+'\n");
  ProcessResult run = runner({"queue"});
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("queue.yaml:3"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("has no capture group"), std::string::npos) << run.err;
}

TEST_F(Results, ReportDrawsOneLinePerSeriesInHeadlessChromium) {
  std::string chromium = testing::find_chromium();
  RUNNER_REQUIRE_CHROMIUM(chromium);
  ASSERT_EQ(runner({"queue"}).status, 0);
  ProcessResult report =
      runner({"report", "--plot", "throughput:batch:model", "-o", "report.html"});
  ASSERT_EQ(report.status, 0) << report.err;
  ProcessResult dom =
      testing::headless_chromium(chromium, dir, {"--dump-dom"}, "file://" + dir.file("report.html"));
  ASSERT_EQ(dom.status, 0) << dom.err;
  // model a and model b: a line each, with a point per batch size.
  EXPECT_EQ(testing::count(dom.out, "<path class=\"series\""), 2) << dom.out.substr(0, 2000);
  std::size_t results = dom.out.find("<table id=\"results\">");
  ASSERT_NE(results, std::string::npos);
  std::string table = dom.out.substr(results, dom.out.find("</table>", results) - results);
  EXPECT_EQ(testing::count(table, "<tr>"), 5) << table;  // a header and four jobs
}

// A service torn down at the run's end is not a failed job: the results
// leave it out, and show it with its state when asked.
TEST_F(Results, AServiceIsNoJobOfTheResultsUnlessAskedForThenItIsStopped) {
  dir.write("queue.yaml",
            "- command: echo up; exec sleep 60\n"
            "  service: db\n"
            "  ready_log: up\n"
            "- command: 'echo throughput: 5'\n"
            "  metrics: {throughput: 'throughput: ([0-9.]+)'}\n");
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  ProcessResult results = runner({"results"});
  ASSERT_EQ(results.status, 0) << results.err;
  EXPECT_EQ(results.out.rfind("id,host,slot,outcome,exit,duration_s,attempts,throughput\n"
                              "2,localhost,localhost #",
                              0),
            0u)
      << results.out;
  EXPECT_EQ(testing::count(results.out, "\n"), 2) << results.out;
  ProcessResult with = runner({"results", "--services", "--format", "tsv"});
  ASSERT_EQ(with.status, 0) << with.err;
  EXPECT_NE(with.out.find("1\tdb\tlocalhost\tlocalhost #0\tstopped\tSIGTERM\t"), std::string::npos)
      << with.out;
  EXPECT_EQ(with.out.find("failed"), std::string::npos) << with.out;
}

// A job that writes a file with a field named like one of its parameters:
// the parameter keeps its name, the file's field is file.NAME, in every
// format.
TEST_F(Results, AFileFieldNamedLikeAParameterIsItsOwnColumn) {
  // The two jobs run side by side in one directory: each writes a file of
  // its own, or one could bring back the other's.
  dir.write("queue.yaml",
            "- command: |-\n"
            "    echo '{\"batch\": <<batch>>0, \"id\": 7, \"tps\": 3}' > r<<batch>>.json\n"
            "  batch: [1, 2]\n"
            "  outputs: r<<batch>>.json\n");
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  ProcessResult csv = runner({"results"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')),
            "id,batch,host,slot,outcome,exit,duration_s,attempts,file.batch,file.id,tps")
      << csv.out;
  ProcessResult markdown = runner({"results", "--format", "markdown"});
  EXPECT_EQ(markdown.out.rfind("| id | batch | host | slot | outcome | exit | duration_s | "
                               "attempts | file.batch | file.id | tps |\n",
                               0),
            0u)
      << markdown.out;
  ProcessResult jsonl = runner({"results", "--format", "jsonl"});
  EXPECT_NE(jsonl.out.find("\"batch\":2,"), std::string::npos) << jsonl.out;
  EXPECT_NE(jsonl.out.find("\"file.batch\":20,\"file.id\":7,"), std::string::npos) << jsonl.out;
}

// A sweep over model × batch × fusion whose throughput doubles with
// fusion, and is one more for model b.
struct FusionSweep : Results {
  void SetUp() override {
    dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
    dir.write("queue.yaml",
              "- command: 't=<<batch>>0; [ <<fusion>> = on ] && t=$((t * 2)); "
              "[ <<model>> = b ] && t=$((t + 1)); echo throughput: $t'\n"
              "  model: [a, b]\n"
              "  batch: [1, 2]\n"
              "  fusion: [on, off]\n"
              "  metrics: {throughput: 'throughput: ([0-9.]+)'}\n");
    ProcessResult run = runner({"queue"});
    ASSERT_EQ(run.status, 0) << run.err;
  }
};

TEST_F(FusionSweep, PlotsALinePerModelAndFusionOrWarnsOfPointsThatMergeModels) {
  ProcessResult both = runner({"report", "--plot", "throughput:batch:model,fusion", "-o", "-"});
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(testing::count(both.out, "<path class=\"series\""), 4);
  EXPECT_NE(both.out.find("data-series=\"model=b, fusion=off\""), std::string::npos);
  EXPECT_EQ(both.err.find("warning"), std::string::npos) << both.err;

  ProcessResult merged = runner({"report", "--plot", "throughput:batch:fusion", "-o", "-"});
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(testing::count(merged.out, "<path class=\"series\""), 2);
  EXPECT_EQ(testing::count(merged.out, "class=\"whisker\""), 4);  // a bar at each x
  EXPECT_NE(merged.err.find("runner: warning: --plot throughput:batch:fusion: the jobs of one "
                            "point differ in model (a, b)"),
            std::string::npos)
      << merged.err;
  EXPECT_NE(merged.out.find("fusion=on, batch 2: 40.5 (mean of 2, 40 to 41)"), std::string::npos);

  ProcessResult picked =
      runner({"report", "--plot", "throughput:batch:fusion", "--where", "model=a", "-o", "-"});
  ASSERT_EQ(picked.status, 0) << picked.err;
  EXPECT_EQ(testing::count(picked.out, "class=\"whisker\""), 0);
  EXPECT_EQ(picked.err.find("warning"), std::string::npos) << picked.err;
}

TEST_F(FusionSweep, PlotsTheSpeedupOfFusionOverItsBaselinePerModel) {
  ProcessResult report =
      runner({"report", "--plot", "throughput/fusion=off:batch:model", "-o", "-"});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_EQ(testing::count(report.out, "<path class=\"series\""), 2);
  EXPECT_NE(report.out.find("<title>model=a, batch 2: 2</title>"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("throughput relative to fusion=off by batch"), std::string::npos);
  EXPECT_EQ(report.err.find("warning"), std::string::npos) << report.err;

  ProcessResult bad = runner({"report", "--plot", "throughput/fusion=auto:batch", "-o", "-"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("no job has fusion=auto; fusion has: on, off"), std::string::npos)
      << bad.err;
  ProcessResult typo = runner({"results", "--where", "model=c"});
  EXPECT_EQ(typo.status, 0);
  EXPECT_EQ(typo.out,
            "id,batch,fusion,model,host,slot,outcome,exit,duration_s,attempts,"
            "throughput\n");
  EXPECT_NE(typo.err.find("--where: no job has model=c; model has: a, b"), std::string::npos)
      << typo.err;
}

TEST_F(FusionSweep, ReportShowsLinesBarsAndTheWarningInHeadlessChromium) {
  std::string chromium = testing::find_chromium();
  RUNNER_REQUIRE_CHROMIUM(chromium);
  ProcessResult report = runner({"report", "--plot", "throughput:batch:fusion", "--plot",
                                 "throughput/fusion=off:batch:model", "-o", "report.html"});
  ASSERT_EQ(report.status, 0) << report.err;
  ProcessResult dom = testing::headless_chromium(chromium, dir, {"--dump-dom"},
                                                 "file://" + dir.file("report.html"));
  ASSERT_EQ(dom.status, 0) << dom.err;
  EXPECT_EQ(testing::count(dom.out, "<path class=\"series\""), 4);
  EXPECT_EQ(testing::count(dom.out, "<polyline class=\"whisker\""), 4);
  EXPECT_EQ(testing::count(dom.out, "<line class=\"reference\""), 1);
  EXPECT_EQ(testing::count(dom.out,
                           "<p class=\"plot-warning\">Warning: the jobs of one point "
                           "differ in model (a, b)"),
            1);
}

// The HFTA shape: each job of a sweep writes a CSV of its own on its host;
// the campaign ends in one table and a plot with no script of the user's.
TEST(ResultsOfASweep, OneCsvPerJobBecomesOneTableAndAPlot) {
  TempDir dir;
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  dir.write("queue.yaml",
            "- command: mkdir -p out && printf 'step,speedup\\n1,1\\n2,<<batch>>.5\\n' > "
            "out/<<model>>-<<batch>>.csv\n"
            "  model: [a, b]\n"
            "  batch: [1, 2, 4]\n"
            "  outputs: out/<<model>>-<<batch>>.csv\n");
  auto runner = [&](std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  };
  ProcessResult run = runner({"queue"});
  ASSERT_EQ(run.status, 0) << run.err;
  ProcessResult results = runner({"results", "--format", "tsv"});
  ASSERT_EQ(results.status, 0) << results.err;
  std::istringstream lines(results.out);
  std::string header;
  std::getline(lines, header);
  EXPECT_NE(header.find("\tstep\tspeedup"), std::string::npos) << header;
  int rows = 0;
  for (std::string line; std::getline(lines, line); ++rows) {
    // The last row of each job's CSV: step 2, speedup <<batch>>.5.
    std::string batch = line.substr(line.find('\t') + 1, 1);
    EXPECT_NE(line.find("\t2\t" + batch + ".5"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 6) << results.out;
  ProcessResult report = runner({"report", "--plot", "speedup:batch:model", "-o", "-"});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_EQ(testing::count(report.out, "<path class=\"series\""), 2);
}

}  // namespace
}  // namespace runner
