// A job's GPU figures from the journal's job_gpu (or, in journals of
// earlier versions, its job_end) to `runner results` (its columns, plotted
// like any metric) and `runner status` (the energy so far).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "runner/report/campaign.h"
#include "runner/report/html_report.h"
#include "runner/report/results_plot.h"
#include "runner/report/results_table.h"
#include "runner/report/run_tally.h"
#include "runner/report/status_view.h"
#include "runner/state/gpu_figures_record.h"
#include "typed_records.h"

namespace runner {
namespace {

using nlohmann::json;

json record(const std::string& event, const std::string& time, json fields) {
  fields["event"] = event;
  fields["time"] = time;
  return fields;
}

// Jobs of batch 1, 2 and 4 on one GPU, each taking 100 J a batch; the
// first's figures are in its job_end, as earlier versions wrote them, the
// second's in a job_gpu after it; the third has no GPU figures.
std::vector<json> records() {
  std::vector<json> records{record(
      "run_start", "2024-05-01T10:00:00.000Z",
      {{"run", "r1"}, {"pid", 77}, {"mode", "queue"}, {"hosts_file", "h"}, {"queue_file", "q"}})};
  for (int id = 1; id <= 3; ++id) {
    int batch = 1 << (id - 1);
    std::string second = std::to_string(id * 10);
    records.push_back(record("job_start", "2024-05-01T10:00:" + second + ".000Z",
                             {{"job", id},
                              {"run", "r1"},
                              {"command", "bench"},
                              {"slot", "node01 gpu=0"},
                              {"host", "node01"},
                              {"slot_index", 0},
                              {"params", {{"batch", std::to_string(batch)}, {"model", "m"}}},
                              {"line", 1}}));
    json end = {{"job", id},       {"exit", 0},      {"signal", nullptr},
                {"error", nullptr}, {"lost", false}, {"duration_ms", 5000}};
    json figures =
        json::parse(gpu_figures_record(GpuFigures{100.0 * batch, 20, 30, 55.5, 1234, 5, 1}).dump());
    if (id == 1) end[k_gpu_figures_key] = figures;
    records.push_back(record("job_end", "2024-05-01T10:00:" + second + ".500Z", end));
    if (id == 2)
      records.push_back(record("job_gpu", "2024-05-01T10:00:" + second + ".700Z",
                               {{"job", id}, {"attempt", 1}, {k_gpu_figures_key, figures}}));
  }
  return records;
}

Campaign campaign() {
  return campaign_from_records(testing::typed_records(records()), [](long) { return false; });
}

TEST(GpuFiguresRecord, WhatIsWrittenIsReadBack) {
  GpuFigures figures{123.4567, 24.5, 99, 87.25, 4096, 5.0391, 2};
  std::optional<GpuFigures> read = gpu_figures_of(json::parse(gpu_figures_record(figures).dump()));
  ASSERT_TRUE(read);
  EXPECT_DOUBLE_EQ(read->energy_j, 123.457);
  EXPECT_DOUBLE_EQ(read->power_max_w, 99);
  EXPECT_DOUBLE_EQ(read->util_mean, 87.25);
  EXPECT_DOUBLE_EQ(read->memory_max_mib, 4096);
  EXPECT_DOUBLE_EQ(read->seconds, 5.039);
  EXPECT_EQ(read->gpus, 2);
  EXPECT_FALSE(gpu_figures_of(json::parse(R"({"energy_j": "many"})")));
  EXPECT_FALSE(gpu_figures_of(json(3)));
}

TEST(GpuFiguresRecord, AJobGpuRecordGivesItsAttemptsFiguresWhenTheNextAttemptStartedFirst) {
  std::vector<json> all = records();
  json again = all[6];  // job 3's start, as its second attempt
  again["attempt"] = 2;
  again["time"] = "2024-05-01T10:00:50.000Z";
  all.push_back(again);
  all.push_back(
      record("job_gpu", "2024-05-01T10:00:50.100Z",
             {{"job", 3},
              {"attempt", 1},
              {k_gpu_figures_key, json::parse(gpu_figures_record({7, 1, 1, 1, 1, 1, 1}).dump())}}));
  all.push_back(record("job_gpu", "2024-05-01T10:00:50.200Z",
                       {{"job", 3}, {"attempt", 2}, {k_gpu_figures_key, "unreadable"}}));
  Campaign read = campaign_from_records(testing::typed_records(all), [](long) { return false; });
  ASSERT_EQ(read.jobs.size(), 4u);
  ASSERT_TRUE(read.jobs[0].gpu) << "an earlier version's job_end";
  EXPECT_DOUBLE_EQ(read.jobs[0].gpu->energy_j, 100);
  ASSERT_TRUE(read.jobs[1].gpu) << "its job_gpu";
  EXPECT_DOUBLE_EQ(read.jobs[1].gpu->energy_j, 200);
  ASSERT_TRUE(read.jobs[2].gpu) << "its job_gpu, after its next attempt started";
  EXPECT_DOUBLE_EQ(read.jobs[2].gpu->energy_j, 7);
  EXPECT_EQ(read.jobs[3].attempt, 2);
  EXPECT_FALSE(read.jobs[3].gpu) << "figures that cannot be read are none";
}

TEST(GpuFiguresResults, AreColumnsAfterTheFixedOnesEmptyWhereAJobHasNone) {
  ResultsTable table = results_table(campaign(), [](const CampaignJob&) { return JobMetrics{}; });
  std::string csv = format_results(table, ResultsFormat::csv);
  EXPECT_NE(csv.find("id,batch,model,host,slot,outcome,exit,duration_s,attempts,gpu_energy_j,"
                     "gpu_power_mean_w,gpu_power_max_w,gpu_util_mean,gpu_mem_max_mib\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find(",1,200.000,20.000,30.000,55.5,1234\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",1,,,,,\n"), std::string::npos) << csv;
}

TEST(GpuFiguresResults, AreNotColumnsWhenNoJobHasThem) {
  std::vector<json> without = records();
  for (json& each : without) each.erase(k_gpu_figures_key);
  ResultsTable table = results_table(
      campaign_from_records(testing::typed_records(without), [](long) { return false; }),
      [](const CampaignJob&) { return JobMetrics{}; });
  EXPECT_FALSE(table.column("gpu_energy_j"));
}

TEST(GpuFiguresResults, EnergyIsPlottedLikeAMetric) {
  ResultsTable table = results_table(campaign(), [](const CampaignJob&) { return JobMetrics{}; });
  std::optional<PlotRequest> request = parse_plot_request("gpu_energy_j:batch:model");
  ASSERT_TRUE(request);
  Result<LinePlot> plot = results_plot(table, *request);
  ASSERT_TRUE(plot.ok()) << plot.status().message();
  ASSERT_EQ(plot->series.size(), 1u);
  ASSERT_EQ(plot->series[0].points.size(), 2u) << "the job without figures is no point";
  EXPECT_DOUBLE_EQ(plot->series[0].points[1].y, 200);
}

TEST(GpuFiguresStatus, SaysTheEnergySoFarOfTheRunAndOfEachSlot) {
  setenv("TZ", "UTC", 1);
  tzset();
  Campaign read = campaign();
  RunStatus status =
      run_status(read, read.runs[0], 0, *parse_utc_time("2024-05-01T10:01:00.000Z"));
  ASSERT_TRUE(status.gpu_energy_j);
  EXPECT_DOUBLE_EQ(*status.gpu_energy_j, 300);
  EXPECT_NE(format_status(status, "q.runner", 100).find("· GPU energy 300 J so far\n"),
            std::string::npos)
      << format_status(status, "q.runner", 100);
  EXPECT_EQ(status_json(status, "q.runner")["gpu_energy_j"], 300.0);
  // And each slot's.
  ASSERT_EQ(status.slots.size(), 1u);
  ASSERT_TRUE(status.slots[0].gpu_energy_j);
  EXPECT_DOUBLE_EQ(*status.slots[0].gpu_energy_j, 300);
  std::string text = format_status(status, "q.runner", 100);
  EXPECT_NE(text.find("BUSY  GPU ENERGY  COMMAND\n"), std::string::npos) << text;
  EXPECT_NE(text.find("%  300 J\n"), std::string::npos) << text;
  EXPECT_EQ(status_json(status, "q.runner")["slots"][0]["gpu_energy_j"], 300.0);
  // Compacted into a checkpoint's tally and read back, it is the same.
  RunTally tally;
  for (std::size_t job : read.runs[0].jobs)
    tally_job(tally, read.jobs[job], read.jobs[job].end.value_or(read.jobs[job].start));
  std::optional<RunTally> back = tally_from_json(tally_json(tally));
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(*back->slots.begin()->second.gpu_energy_j, 300);
}

TEST(GpuFiguresReport, DrawsAPowerLanePerGpuSlotUnderTheTimeline) {
  HtmlReportOptions options;
  options.now = *parse_utc_time("2024-05-01T10:01:00.000Z");
  std::string page = render_html_report(campaign(), options);
  std::size_t timeline = page.find("<svg id=\"timeline\"");
  std::size_t power = page.find("<svg id=\"gpu-power\"");
  ASSERT_NE(power, std::string::npos);
  EXPECT_LT(timeline, power);
  EXPECT_NE(page.find("node01 gpu=0</text>", power), std::string::npos);
  EXPECT_NE(page.find("<title>#2 [node01 gpu=0] 20 W mean, 30 W peak, 200 J, 56 % utilisation, "
                      "1234 MiB peak</title>",
                      power),
            std::string::npos)
      << page.substr(power, 3000);
  std::vector<json> without = records();
  for (json& each : without) each.erase(k_gpu_figures_key);
  EXPECT_EQ(render_html_report(
                campaign_from_records(testing::typed_records(without), [](long) { return false; }),
                options)
                .find("gpu-power"),
            std::string::npos);
}

// The coordinate pairs of the polyline of `gpu` ("host:index") in `page`.
std::size_t polyline_points(const std::string& page, const std::string& gpu) {
  std::size_t line = page.find("<polyline class=\"gpu-series\" data-gpu=\"" + gpu + "\"");
  if (line == std::string::npos) return 0;
  std::size_t begin = page.find(" points=\"", line) + 9;
  std::string points = page.substr(begin, page.find('"', begin) - begin);
  return static_cast<std::size_t>(std::count(points.begin(), points.end(), ','));
}

TEST(GpuFiguresReport, DrawsPowerOverTimeALanePerGpuFromTheRecordedSeries) {
  HtmlReportOptions options;
  options.now = *parse_utc_time("2024-05-01T10:01:00.000Z");
  auto at = [](const std::string& time) { return *parse_utc_time("2024-05-01T" + time + "Z"); };
  options.gpu_power = {
      {"node01", "0", at("10:00:10.000"), at("10:00:12.000"), 100},
      {"node01", "1", at("10:00:10.000"), at("10:00:12.000"), 50},
      {"node01", "0", at("10:00:12.000"), at("10:00:14.000"), 300},
      {"node01", "0", at("10:00:14.000"), at("10:00:16.000"), 200},
      {"node01", "1", at("10:00:12.000"), at("10:00:14.000"), 60},
      {"node01", "0", at("09:00:00.000"), at("09:00:02.000"), 999},  // before the run shown
  };
  std::string page = render_html_report(campaign(), options);
  std::size_t timeline = page.find("<svg id=\"timeline\"");
  std::size_t series = page.find("<svg id=\"gpu-power-series\"");
  ASSERT_NE(series, std::string::npos) << page;
  EXPECT_LT(timeline, series);
  std::string section = page.substr(series, page.find("</svg>", series) - series);
  EXPECT_NE(section.find("node01 gpu 1</text>"), std::string::npos) << section;
  std::size_t lines = 0;
  for (std::size_t at = 0; (at = section.find("<polyline", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 2u) << "a series per GPU";
  EXPECT_EQ(polyline_points(section, "node01:0"), 3u) << section;
  EXPECT_EQ(polyline_points(section, "node01:1"), 2u) << section;
  EXPECT_NE(section.find("data-gpu=\"node01:0\" data-points=\"3\""), std::string::npos);
  options.gpu_power.clear();
  EXPECT_EQ(render_html_report(campaign(), options).find("gpu-power-series"), std::string::npos);
  // 2500 stretches of 10 ms are drawn as 834 points of three at most.
  for (int i = 0; i < 2500; ++i)
    options.gpu_power.push_back({"node01", "0",
                                 at("10:00:10.000") + std::chrono::milliseconds(10 * i),
                                 at("10:00:10.000") + std::chrono::milliseconds(10 * i + 10), 100});
  page = render_html_report(campaign(), options);
  EXPECT_EQ(polyline_points(page, "node01:0"), 834u);
}

}  // namespace
}  // namespace runner
