// `runner report` of a campaign too big for a bar per job, as headless
// Chromium shows it: a timeline of runs of bars that still accounts for
// every job, and the jobs and results tables drawn a page at a time.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "support/headless_chromium.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::count;
using testing::ProcessResult;
using testing::TempDir;

constexpr int k_jobs = 21'000;  // past the report's 20,000 bars
constexpr int k_slots = 64;

std::string utc(long long ms) {
  time_t seconds = 1'714'557'600 + ms / 1000;  // 2024-05-01 10:00:00 UTC
  struct tm parts {};
  gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
  return fmt::format("{}.{:03}Z", text, ms % 1000);
}

// One finished run: job j lasts 1 s + j ms on slot (j - 1) % 64, 50 ms
// after that slot's previous job; every 100th fails.
std::string journal() {
  std::vector<std::pair<long long, std::string>> records;
  std::string slots;
  for (int s = 0; s < k_slots; ++s)
    slots += fmt::format(R"({}{{"label":"node01 #{}","host":"node01","index":{},"params":{{}}}})",
                         s ? "," : "", s, s);
  records.emplace_back(0, fmt::format(R"({{"event":"run_start","time":"{}","run":"r1","pid":77,)"
                                      R"("mode":"queue","hosts_file":"hosts.yaml",)"
                                      R"("queue_file":"queue.yaml","slots":[{}],"queued":{}}})",
                                      utc(0), slots, k_jobs));
  std::vector<long long> free_at(k_slots, 10);
  for (int j = 1; j <= k_jobs; ++j) {
    int s = (j - 1) % k_slots;
    long long start = free_at[s], took = 1000 + j;
    free_at[s] = start + took + 50;
    records.emplace_back(
        start, fmt::format(R"({{"event":"job_start","time":"{}","job":{},"run":"r1",)"
                           R"("command":"train --seed {}","slot":"node01 #{}","host":"node01",)"
                           R"("slot_index":{},"params":{{"seed":"{}"}},"line":1,"attempt":1}})",
                           utc(start), j, j, s, s, j));
    records.emplace_back(start + took,
                         fmt::format(R"({{"event":"job_end","time":"{}","job":{},"exit":{},)"
                                     R"("signal":null,"error":null,"lost":false,"rerun":false,)"
                                     R"("duration_ms":{}}})",
                                     utc(start + took), j, j % 100 == 0 ? 1 : 0, took));
  }
  long long end = *std::max_element(free_at.begin(), free_at.end());
  records.emplace_back(end, fmt::format(R"({{"event":"run_end","time":"{}","run":"r1",)"
                                        R"("status":"failed"}})",
                                        utc(end)));
  std::stable_sort(records.begin(), records.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string text;
  for (const auto& [at, line] : records) text += line + "\n";
  return text;
}

// The part of `dom` from `open` to the next `close`.
std::string between(const std::string& dom, const std::string& open, const std::string& close) {
  std::size_t from = dom.find(open);
  if (from == std::string::npos) return "";
  return dom.substr(from, dom.find(close, from) - from);
}

TEST(BigReport, RunsOfBarsAndTablesAPageAtATimeInHeadlessChromium) {
  std::string chromium = testing::find_chromium();
  RUNNER_REQUIRE_CHROMIUM(chromium);
  TempDir dir;
  dir.write("queue.runner/journal.jsonl", journal());
  ProcessResult report = testing::run_process(testing::runner_spec(
      {"report", "--state-dir", dir.file("queue.runner"), "-o", "report.html"}, dir.path()));
  ASSERT_EQ(report.status, 0) << report.err;
  ProcessResult dom = testing::headless_chromium(
      chromium, dir, {"--dump-dom"}, "file://" + dir.file("report.html") + "#sort=duration");
  ASSERT_EQ(dom.status, 0) << dom.err;

  // Every job is in a bar, the failures each in their own, between runs of
  // successes: at most a run per slot and two more per failure.
  int jobs_in_bars = 0, bars = 0;
  std::regex bar(R"re(<rect class="(job [a-z]+" data-job="\d+|jobs [a-z]+" data-jobs="(\d+))")re");
  for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), bar);
       it != std::sregex_iterator(); ++it, ++bars)
    jobs_in_bars += (*it)[2].matched ? std::stoi((*it)[2]) : 1;
  EXPECT_EQ(jobs_in_bars, k_jobs);
  EXPECT_EQ(count(dom.out, "<rect class=\"job failed\" data-job="), k_jobs / 100);
  EXPECT_LE(bars, k_slots + 2 * k_jobs / 100);
  EXPECT_GT(count(dom.out, "<rect class=\"jobs ok\" data-jobs="), 0);

  // The jobs table: its first page, sorted by duration, longest first.
  std::string rows = between(dom.out, "<table id=\"jobs\">", "</tbody>");
  std::vector<std::string> ids;
  std::regex id(R"re(<tr><td class="num" data-v="(\d+)">)re");
  for (auto it = std::sregex_iterator(rows.begin(), rows.end(), id); it != std::sregex_iterator();
       ++it)
    ids.push_back((*it)[1]);
  ASSERT_EQ(ids.size(), 500u) << rows.substr(0, 2000);
  EXPECT_EQ(ids[0], std::to_string(k_jobs));
  EXPECT_EQ(ids[1], std::to_string(k_jobs - 1));
  EXPECT_EQ(ids[499], std::to_string(k_jobs - 499));
  EXPECT_NE(dom.out.find(fmt::format("500 of {} jobs shown", k_jobs)), std::string::npos);
  EXPECT_FALSE(between(dom.out, "<button id=\"more\"", ">").find("hidden") != std::string::npos)
      << "more can be shown";

  // The results table: its first page, in job order.
  std::string results = between(dom.out, "<table id=\"results\">", "</tbody>");
  EXPECT_EQ(count(results, "<tr><td>"), 500) << results.substr(0, 2000);
  EXPECT_NE(results.find("<tr><td>1</td><td>1</td><td>node01</td>"), std::string::npos)
      << results.substr(0, 2000);
  EXPECT_NE(dom.out.find(fmt::format("500 of {} rows shown", k_jobs)), std::string::npos);
}

}  // namespace
}  // namespace runner
