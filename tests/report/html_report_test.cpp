// The HTML report's content: one bar per job and slot, escaping, failures
// with their logs, nothing fetched from anywhere, and a size that stays
// reasonable for 10,000 jobs.
#include "runner/report/html_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <numeric>
#include <regex>
#include <set>

#include "gang_journal.h"
#include "support/text.h"
#include "typed_records.h"

namespace runner {
namespace {

using nlohmann::json;
using testing::count;

json record(const std::string& event, const std::string& time, json fields) {
  fields["event"] = event;
  fields["time"] = time;
  return fields;
}

std::string at(int second) {
  return fmt::format("2024-05-01T10:{:02}:{:02}.000Z", second / 60 % 60, second % 60);
}

// A run on `slots` slots of one host with `jobs` jobs, each taking 3s, one
// after the other on each slot; every 7th fails.
std::vector<json> campaign_records(int slots, int jobs, const std::string& command = "bench") {
  json slot_list = json::array();
  for (int s = 0; s < slots; ++s)
    slot_list.push_back({{"label", fmt::format("node01 gpu={}", s)},
                         {"host", "node01"},
                         {"index", s},
                         {"params", {{"gpu", std::to_string(s)}}}});
  std::vector<json> records = {record("run_start", at(0),
                                      {{"run", "r1"},
                                       {"pid", 77},
                                       {"mode", "queue"},
                                       {"hosts_file", "hosts.yaml"},
                                       {"queue_file", "queue.yaml"},
                                       {"slots", slot_list}})};
  for (int j = 1; j <= jobs; ++j) {
    int slot = (j - 1) % slots;
    int start = ((j - 1) / slots) * 3;
    records.push_back(record("job_start", at(start),
                             {{"job", j},
                              {"run", "r1"},
                              {"command", command + " " + std::to_string(j)},
                              {"slot", fmt::format("node01 gpu={}", slot)},
                              {"host", "node01"},
                              {"slot_index", slot},
                              {"params", json::object()},
                              {"line", 1}}));
    bool fails = j % 7 == 0;
    records.push_back(record("job_end", at(start + 3),
                             {{"job", j},
                              {"exit", fails ? 2 : 0},
                              {"signal", nullptr},
                              {"error", nullptr},
                              {"lost", false},
                              {"duration_ms", 3000}}));
  }
  records.push_back(
      record("run_end", at(jobs / slots * 3 + 4), {{"run", "r1"}, {"status", "failed"}}));
  return records;
}

std::set<std::string> bar_jobs(const std::string& page) {
  std::set<std::string> ids;
  std::regex bar(R"re(<rect class="job [a-z]+" data-job="(\d+)")re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), bar); it != std::sregex_iterator();
       ++it)
    ids.insert((*it)[1]);
  return ids;
}

// The rows of the jobs table, which the page's script draws.
nlohmann::json table_data(const std::string& page) {
  std::string open = "<script type=\"application/json\" id=\"job-data\">";
  std::size_t from = page.find(open);
  if (from == std::string::npos) return nullptr;
  from += open.size();
  return nlohmann::json::parse(page.substr(from, page.find("</script>", from) - from));
}

HtmlReportOptions options_now() {
  HtmlReportOptions options;
  options.title = "queue.yaml";
  options.now = *parse_utc_time(at(3000));
  return options;
}

TEST(HtmlReport, OneBarPerJobColouredByOutcomeWithItsCommandOnHover) {
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(3, 14)),
                                            [](long) { return false; });
  std::string page = render_html_report(campaign, options_now());
  EXPECT_EQ(count(page, "<rect class=\"job "), 14);
  EXPECT_EQ(bar_jobs(page).size(), 14u);
  EXPECT_EQ(count(page, "<rect class=\"job failed\""), 2);
  EXPECT_EQ(count(page, "<rect class=\"job ok\""), 12);
  EXPECT_NE(page.find("<title>#7 [node01 gpu=0] exit 2 after 3.0s\nstarted "), std::string::npos);
  EXPECT_NE(page.find("bench 7</title>"), std::string::npos);
  // Three slot rows, each labelled, and the table has every job.
  for (int s = 0; s < 3; ++s)
    EXPECT_NE(page.find(fmt::format(">node01 gpu={}</text>", s)), std::string::npos);
  nlohmann::json table = table_data(page);
  ASSERT_EQ(table.size(), 14u);
  ASSERT_GE(table[6].size(), 10u);
  EXPECT_EQ(table[6][0], 7);
  EXPECT_EQ(table[6][1], "node01 gpu=0");
  EXPECT_EQ(table[6][2], "failed");
  EXPECT_EQ(table[6][6], 3000);
  EXPECT_EQ(table[6][8], "exit 2");
  EXPECT_EQ(table[6][9], "bench 7");
  EXPECT_NE(page.find("<h2>Failures (2)</h2>"), std::string::npos);
}

TEST(HtmlReport, AJobOnSeveralSlotsHasABarOnEach) {
  std::vector<json> records = campaign_records(2, 2);
  records.insert(records.end() - 1, record("job_start", at(10),
                                           {{"job", 3},
                                            {"run", "r1"},
                                            {"command", "torchrun"},
                                            {"slot", "node01 gpu=0,1"},
                                            {"host", "node01"},
                                            {"slot_index", 0},
                                            {"slot_indices", {0, 1}},
                                            {"params", json::object()},
                                            {"line", 1}}));
  Campaign campaign =
      campaign_from_records(testing::typed_records(records), [](long) { return true; });
  std::string page = render_html_report(campaign, options_now());
  EXPECT_EQ(count(page, "data-job=\"3\""), 2);
  EXPECT_EQ(bar_jobs(page).size(), 3u);
}

TEST(HtmlReport, AGangJobIsOneJobWithABarPerTaskOnItsSlotsLanes) {
  Campaign campaign = campaign_from_records(testing::journal_records(testing::k_gang_journal),
                                            [](long) { return true; });
  campaign.state_dir = "q.runner";
  HtmlReportOptions options = options_now();
  std::vector<JobId> asked;
  options.log_tail = [&](const CampaignJob& job) {
    asked.push_back(job.id);
    return std::string("CUDA error\n");
  };
  std::string page = render_html_report(campaign, options);
  // #1 held two slots on each of two nodes: four bars, all alike but their rank.
  EXPECT_EQ(count(page, "<rect class=\"job failed\" data-job=\"1\" data-rank=\"0\""), 2);
  EXPECT_EQ(count(page, "<rect class=\"job failed\" data-job=\"1\" data-rank=\"1\""), 2);
  EXPECT_EQ(count(page, "<title>#1 [2 nodes: node01, node02] rank 1: exit 1 after 30.0s\n"), 4);
  EXPECT_EQ(count(page, "<rect class=\"job running\" data-job=\"3\" data-rank="), 2);
  EXPECT_EQ(count(page, "data-job=\"2\" x="), 1) << "a job without nodes: has no rank";
  // Rank 1 of #1 is on node02's lanes (rows 3 and 4 of 4), from its own start.
  std::regex rank1(R"re(data-job="1" data-rank="1" x="([\d.]+)" y="([\d.]+)")re");
  std::set<std::string> lanes;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), rank1);
       it != std::sregex_iterator(); ++it)
    lanes.insert((*it)[2]);
  EXPECT_EQ(lanes, (std::set<std::string>{"71.0", "91.0"}));

  nlohmann::json table = table_data(page);
  ASSERT_EQ(table.size(), 3u) << "one row per job, not per task";
  ASSERT_GE(table[0].size(), 9u);
  EXPECT_EQ(table[0][1], "2 nodes: node01, node02");
  EXPECT_EQ(table[0][8], "rank 1: exit 1");
  ASSERT_GE(table[1].size(), 2u);
  EXPECT_EQ(table[1][1], "node01 gpu=0");
  EXPECT_EQ(asked, (std::vector<JobId>{1}));
  EXPECT_NE(page.find("[2 nodes: node01, node02] rank 1: exit 1 after 30.0s — log: "
                      "<code>q.runner/logs/1.1.log</code>"),
            std::string::npos);
  EXPECT_NE(page.find("rank 1 on node02 gpu=0,1: <code>q.runner/logs/1.1.log</code>"),
            std::string::npos);
  EXPECT_NE(page.find("<div class=\"card \"><b>3</b><span>jobs</span>"), std::string::npos);
}

TEST(HtmlReport, EscapesEverythingTheUserWrote) {
  Campaign campaign =
      campaign_from_records(testing::typed_records(campaign_records(
                                1, 7, "echo \"<script>alert('x')</script>\" && true")),
                            [](long) { return false; });
  std::string page = render_html_report(campaign, options_now());
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(
      page.find("echo &quot;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot; &amp;&amp; true"),
      std::string::npos);
  EXPECT_EQ(count(page, "<script>"), 1) << "only the page's own sorting script";
  EXPECT_EQ(count(page, "</script>"), 2) << "the table's data cannot end its script early";
  EXPECT_EQ(table_data(page)[0][9], "echo \"<script>alert('x')</script>\" && true 1");
}

TEST(HtmlReport, FailuresShowTheirLogTails) {
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(2, 14)),
                                            [](long) { return false; });
  campaign.state_dir = "queue.runner";
  HtmlReportOptions options = options_now();
  std::vector<JobId> asked;
  options.log_tail = [&](const CampaignJob& job) {
    asked.push_back(job.id);
    return "Traceback <most recent call last>\nOOM on job " + std::to_string(job.id) + "\n";
  };
  std::string page = render_html_report(campaign, options);
  EXPECT_EQ(asked, (std::vector<JobId>{7, 14}));
  EXPECT_NE(
      page.find(
          "<pre class=\"log\">Traceback &lt;most recent call last&gt;\nOOM on job 14\n</pre>"),
      std::string::npos);
  EXPECT_NE(page.find("log: <code>queue.runner/logs/7.log</code>"), std::string::npos);
}

TEST(HtmlReport, SelfContained) {
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(2, 4)),
                                            [](long) { return false; });
  std::string page = render_html_report(campaign, options_now());
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_EQ(page.find("http:"), std::string::npos);
  EXPECT_EQ(page.find("https:"), std::string::npos);
  EXPECT_EQ(page.find(" src="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_NE(page.find("</html>"), std::string::npos);
}

TEST(HtmlReport, ChoosesRuns) {
  std::vector<json> records = campaign_records(1, 2);
  std::vector<json> second = campaign_records(1, 3);
  for (json& r : second) {
    if (r.contains("run")) r["run"] = "r2";
    if (r.contains("job")) r["job"] = r["job"].get<int>() + 2;
  }
  records.insert(records.end(), second.begin(), second.end());
  Campaign campaign =
      campaign_from_records(testing::typed_records(records), [](long) { return false; });
  EXPECT_EQ(bar_jobs(render_html_report(campaign, options_now())).size(), 3u) << "the latest run";
  HtmlReportOptions first = options_now();
  first.runs = {"r1"};
  EXPECT_EQ(bar_jobs(render_html_report(campaign, first)).size(), 2u);
  HtmlReportOptions all = options_now();
  all.all_runs = true;
  EXPECT_EQ(bar_jobs(render_html_report(campaign, all)).size(), 5u);
}

TEST(HtmlReport, EmptyJournal) {
  std::string page = render_html_report(Campaign{}, options_now());
  EXPECT_NE(page.find("No run has been recorded yet."), std::string::npos);
  EXPECT_EQ(count(page, "<rect class=\"job "), 0);
}

TEST(HtmlReport, TenThousandJobsStayReasonable) {
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(64, 10'000)),
                                            [](long) { return false; });
  HtmlReportOptions options = options_now();
  options.log_tail = [](const CampaignJob&) { return std::string(2000, 'x'); };
  std::string page = render_html_report(campaign, options);
  EXPECT_EQ(count(page, "<rect class=\"job "), 10'000);
  EXPECT_LT(page.size(), 10'000u * 1000) << "under 1 kB per job";
  EXPECT_EQ(table_data(page).size(), 10'000u);
  // At most max_failure_logs failures carry a log.
  EXPECT_EQ(count(page, "<pre class=\"log\">"), 200);
}

// The counts of the jobs each bar stands for: 1 for a job's own bar.
std::vector<int> bar_sizes(const std::string& page) {
  std::vector<int> sizes;
  std::regex bar(R"re(<rect class="(job [a-z]+" data-job="\d+|jobs [a-z]+" data-jobs="(\d+))")re");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), bar); it != std::sregex_iterator();
       ++it)
    sizes.push_back((*it)[2].matched ? std::stoi((*it)[2]) : 1);
  return sizes;
}

TEST(HtmlReport, PastTheBarLimitASlotsConsecutiveJobsOfOneOutcomeShareABar) {
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(4, 400)),
                                            [](long) { return false; });
  HtmlReportOptions options = options_now();
  options.max_timeline_bars = 399;
  std::string page = render_html_report(campaign, options);
  std::vector<int> sizes = bar_sizes(page);
  EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), 0), 400) << "every job is drawn";
  EXPECT_LT(sizes.size(), 400u / 3);
  // Every 7th job fails: each failure keeps a bar of its own between two
  // runs, so 57 failed bars and at most 57 + 4 runs of successes.
  EXPECT_EQ(count(page, "<rect class=\"job failed\""), 57);
  EXPECT_EQ(count(page, "<rect class=\"jobs failed\""), 0);
  EXPECT_LE(count(page, "<rect class=\"jobs ok\""), 61);
  // Slot 0 runs jobs 1, 5, 9, 13, 17, then 21 fails.
  EXPECT_NE(page.find("data-jobs=\"5\""), std::string::npos);
  EXPECT_NE(page.find("<title>5 jobs succeeded, #1 to #17\nfrom "), std::string::npos);
  EXPECT_NE(page.find("<span>each bar is a run of a slot's consecutive jobs"), std::string::npos);
  // The table still has every job.
  EXPECT_EQ(table_data(page).size(), 400u);

  options.max_timeline_bars = 400;
  EXPECT_EQ(bar_sizes(render_html_report(campaign, options)), std::vector<int>(400, 1))
      << "up to the limit, a bar per job";
}

TEST(HtmlReport, AGapWiderThanAPixelEndsARunOfBars) {
  // One slot, jobs 1 to 30 of 3 s back to back, every 7th failing; from
  // job 16 on, an hour later.
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(1, 30)),
                                            [](long) { return false; });
  for (CampaignJob& job : campaign.jobs) {
    if (job.id < 16) continue;
    job.start += std::chrono::hours(1);
    *job.end += std::chrono::hours(1);
  }
  ASSERT_GE(campaign.runs.size(), 1u);
  *campaign.runs[0].end += std::chrono::hours(1);
  HtmlReportOptions options = options_now();
  options.max_timeline_bars = 1;
  std::string page = render_html_report(campaign, options);
  // 1-6, 7, 8-13, 14, 15 | 16-20, 21, 22-27, 28, 29-30
  EXPECT_EQ(bar_sizes(page), (std::vector<int>{6, 1, 6, 1, 1, 5, 1, 6, 1, 2}));
  EXPECT_NE(page.find("<title>5 jobs succeeded, #16 to #20\nfrom "), std::string::npos);
}

TEST(HtmlReport, PastTheRowLimitTheResultsTableIsDataForTheScript) {
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(2, 4)),
                                            [](long) { return false; });
  HtmlReportOptions options = options_now();
  options.results = ResultsTable{{"id", "model"}, {{"1", "a"}, {"2", "</script>"}, {"3", "c"}}};
  options.max_results_rows_in_markup = 2;
  std::string page = render_html_report(campaign, options);
  std::string open = "<script type=\"application/json\" id=\"results-data\">";
  std::size_t from = page.find(open);
  ASSERT_NE(from, std::string::npos);
  from += open.size();
  json rows = json::parse(page.substr(from, page.find("</script>", from) - from));
  EXPECT_EQ(rows, json::parse(R"([["1","a"],["2","</script>"],["3","c"]])"));
  std::size_t table = page.find("<table id=\"results\">");
  EXPECT_EQ(page.substr(table, page.find("</table>", table) - table).find("<td>"),
            std::string::npos);
  options.max_results_rows_in_markup = 3;
  EXPECT_EQ(render_html_report(campaign, options).find("id=\"results-data\""), std::string::npos);
}

TEST(HtmlReport, ResultsSectionHasItsPlotsAndTable) {
  Campaign campaign = campaign_from_records(testing::typed_records(campaign_records(2, 4)),
                                            [](long) { return false; });
  HtmlReportOptions options = options_now();
  options.results = ResultsTable{{"id", "batch", "model", "throughput"},
                                 {{"1", "8", "a", "1"}, {"2", "16", "a", "2"}, {"3", "8", "<b>", "3"}}};
  LinePlot plot{"throughput by batch", "batch", "throughput", {},
                {{"model=a", {{8, 1, 1, 1, 1}, {16, 2, 2, 2, 1}}}, {"model=<b>", {{8, 3, 3, 3, 1}}}}};
  plot.notes.push_back("A note.");
  plot.warnings.push_back("points differ in <lr>");
  options.plots.push_back(plot);
  std::string page = render_html_report(campaign, options);
  EXPECT_NE(page.find("<p class=\"muted\">A note.</p>"), std::string::npos);
  EXPECT_NE(page.find("<p class=\"plot-warning\">Warning: points differ in &lt;lr&gt;</p>"),
            std::string::npos);
  EXPECT_NE(page.find("<h2>Results (3 jobs)</h2>"), std::string::npos);
  EXPECT_EQ(count(page, "<path class=\"series\""), 2);
  EXPECT_NE(page.find("<table id=\"results\">"), std::string::npos);
  EXPECT_NE(page.find("<td>&lt;b&gt;</td>"), std::string::npos);
  EXPECT_EQ(page.find("http:"), std::string::npos);
  EXPECT_EQ(render_html_report(campaign, options_now()).find("Results ("), std::string::npos);
}

TEST(HtmlReport, OutputFilesAreListedWithTheirSha256) {
  std::vector<json> records = campaign_records(2, 3);
  std::string digest(64, 'a');
  records.insert(records.end() - 1,
                 record("outputs", at(5),
                        {{"job", 2},
                         {"dir", "/work/queue.runner/outputs/2"},
                         {"files", {{{"path", "r<1>.json"}, {"size", 12}, {"sha256", digest}},
                                    {{"path", "log.txt"}, {"size", 3}, {"sha256", nullptr}}}},
                         {"missing", nullptr},
                         {"error", nullptr}}));
  Campaign campaign =
      campaign_from_records(testing::typed_records(records), [](long) { return false; });
  ASSERT_GE(campaign.jobs.size(), 2u);
  ASSERT_EQ(campaign.jobs[1].outputs.size(), 2u);
  EXPECT_EQ(campaign.jobs[1].outputs[0].sha256, digest);
  EXPECT_EQ(campaign.jobs[1].outputs_folder, "/work/queue.runner/outputs/2");
  std::string page = render_html_report(campaign, options_now());
  EXPECT_NE(page.find("<h2>Output files (2)</h2>"), std::string::npos);
  EXPECT_NE(page.find("<tr><td class=\"num\">#2</td><td>r&lt;1&gt;.json</td><td class=\"num\">12"
                      "</td><td class=\"cmd\">" + digest + "</td></tr>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("<td class=\"cmd\">(not read)</td>"), std::string::npos);
  EXPECT_EQ(render_html_report(campaign_from_records(testing::typed_records(campaign_records(2, 3)),
                                                     [](long) { return false; }),
                               options_now())
                .find("Output files"),
            std::string::npos);
}

}  // namespace
}  // namespace runner
