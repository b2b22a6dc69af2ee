// `runner results` on a fixture state directory: the table of its jobs with
// their parameters, how they ran and their metrics (from the log by
// `metrics:`, from collected outputs), in each output format.
#include "runner/report/results_table.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "runner/report/job_metrics.h"
#include "runner/state/journal.h"
#include "support/temp_dir.h"
#include "support/value_of.h"

namespace runner {
namespace {

using std::chrono::milliseconds;
using testing::TempDir;

JobStartRecord start(JobId id, Params params, Params metrics = {}, int attempt = 1) {
  JobStartRecord record;
  record.job = id;
  record.command = "bench";
  record.slot = "localhost #0";
  record.host = "localhost";
  record.slot_indices = {0};
  record.params = std::move(params);
  record.metrics = std::move(metrics);
  record.attempt = attempt;
  return record;
}

// Four jobs: one whose log has two throughputs, one run twice, one with
// collected outputs (JSON and a CSV in a subfolder), one that spans hosts
// (rank 0's log counts) and still runs.
class ResultsFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    Params throughput{{"throughput", "throughput: ([0-9.]+)"}};
    Journal journal = testing::value_of(Journal::open(state.path()));
    ASSERT_TRUE(journal.run_start("queue", "hosts.yaml", "queue.yaml").ok());
    ASSERT_TRUE(journal.job_start(start(1, {{"model", "a"}, {"batch", "8"}}, throughput)).ok());
    ASSERT_TRUE(journal.job_end(1, JobExit::exited(0), milliseconds(1500)).ok());
    ASSERT_TRUE(journal.job_start(start(2, {{"model", "b"}, {"batch", "8"}}, throughput)).ok());
    ASSERT_TRUE(journal.job_end(2, JobExit::exited(1), milliseconds(200), true).ok());
    ASSERT_TRUE(journal.job_start(start(3, {{"model", "a"}, {"lr", "0.1"}})).ok());
    ASSERT_TRUE(journal.job_end(3, JobExit::killed("TERM"), milliseconds(20)).ok());
    ASSERT_TRUE(journal.job_start(start(2, {{"model", "b"}, {"batch", "8"}}, throughput, 2)).ok());
    ASSERT_TRUE(journal.job_end(2, JobExit::exited(0), milliseconds(2250)).ok());
    JobStartRecord gang = start(4, {{"model", "c"}}, throughput);
    gang.nodes = 2;
    gang.tasks = {{0, "localhost", "localhost #0", {0}, "bench"},
                  {1, "localhost", "localhost #1", {1}, "bench"}};
    ASSERT_TRUE(journal.job_start(gang).ok());
    state.write("logs/1.log", "warmup\nthroughput: 10.5\nthroughput: 12.25\ndone\n");
    state.write("logs/2.log", "throughput: 3\nfailed\nthroughput: 7\n");
    state.write("logs/4.0.log", "throughput: 40\n");
    state.write("logs/4.1.log", "throughput: 41\n");
    state.write("outputs/3/metrics.json",
                R"({"loss": 0.25, "name": "x", "ok": true, "nested": {"a": 1}, "steps": 100})");
    state.write("outputs/3/sub/curve.csv", "step,acc,note\n1,0.5,\"a, b\"\n2,0.75,end\n");
    state.write("outputs/3/notes.txt", "accuracy 1\n");
  }

  Campaign campaign() {
    return testing::value_of(load_campaign(state.path(), [](long) { return false; }));
  }

  TempDir state;
};

TEST_F(ResultsFixture, CsvHasARowPerJobItsParametersHowItRanAndItsMetrics) {
  EXPECT_EQ(format_results(read_results(campaign()), ResultsFormat::csv),
            "id,batch,model,lr,host,slot,outcome,exit,duration_s,attempts,throughput,loss,steps,"
            "step,acc\n"
            "1,8,a,,localhost,localhost #0,succeeded,0,1.500,1,12.25,,,,\n"
            "2,8,b,,localhost,localhost #0,succeeded,0,2.250,2,7,,,,\n"
            "3,,a,0.1,localhost,localhost #0,failed,SIGTERM,0.020,1,,0.25,100,2,0.75\n"
            "4,,c,,localhost,localhost #0,unknown,,,1,40,,,,\n");
}

TEST_F(ResultsFixture, MarkdownAndTsvAndJsonLines) {
  ResultsTable table = read_results(campaign());
  table.columns.resize(4);
  table.rows.resize(2);
  for (auto& row : table.rows) row.resize(4);
  table.rows[1][3] = "x|y\tz";
  EXPECT_EQ(format_results(table, ResultsFormat::markdown),
            "| id | batch | model | lr |\n"
            "| --- | --- | --- | --- |\n"
            "| 1 | 8 | a |  |\n"
            "| 2 | 8 | b | x\\|y\tz |\n");
  EXPECT_EQ(format_results(table, ResultsFormat::tsv),
            "id\tbatch\tmodel\tlr\n1\t8\ta\t\n2\t8\tb\tx|y z\n");
  EXPECT_EQ(format_results(table, ResultsFormat::jsonl),
            "{\"id\":1,\"batch\":8,\"model\":\"a\",\"lr\":null}\n"
            "{\"id\":2,\"batch\":8,\"model\":\"b\",\"lr\":\"x|y\\tz\"}\n");
}

TEST(ResultsFormat, CsvQuotesWhatNeedsIt) {
  ResultsTable table{{"id", "note"}, {{"1", "a, \"b\"\nc"}}};
  EXPECT_EQ(format_results(table, ResultsFormat::csv), "id,note\n1,\"a, \"\"b\"\"\nc\"\n");
  EXPECT_EQ(parse_results_format("markdown"), ResultsFormat::markdown);
  EXPECT_EQ(parse_results_format("xlsx"), std::nullopt);
}

TEST(OutputNumbers, ReadsJsonFieldsAndTheLastRowOfATable) {
  EXPECT_EQ(output_numbers("r.json", R"({"b": 2, "a": 1.5, "s": "3", "t": false})"),
            (Params{{"b", "2"}, {"a", "1.5"}}));
  EXPECT_EQ(output_numbers("r.JSON", "[1, 2]"), Params{});
  EXPECT_EQ(output_numbers("r.json", "not json"), Params{});
  EXPECT_EQ(output_numbers("r.tsv", "x\ty\r\n1\t2\r\n3\tn/a\r\n\n"), (Params{{"x", "3"}}));
  EXPECT_EQ(output_numbers("r.csv", "only,a,header\n"), Params{});
  EXPECT_EQ(output_numbers("r.txt", "x\n1\n"), Params{});
}

TEST(ResultsTable, AMetricFromTheLogAndAnOutputOfTheSameNameAreBothKept) {
  TempDir state;
  CampaignJob job;
  job.id = 7;
  job.metrics = {{"loss", "loss=([0-9.]+)"}, {"missing", "nope (1)"}};
  state.write("logs/7.log", "loss=0.5\n");
  state.write("outputs/7/r.json", R"({"loss": 9, "acc": 1})");
  MetricPatterns patterns;
  CollectedJobs collected(state.path());
  JobMetrics metrics = job_metrics(state.path(), job, collected, patterns);
  EXPECT_EQ(metrics.patterns, (Params{{"loss", "0.5"}}));
  EXPECT_EQ(metrics.files, (Params{{"loss", "9"}, {"acc", "1"}}));
}

TEST(ResultsTable, EachMetricIsTheLastValueItsPatternFindsWhereverItStandsInTheLog) {
  TempDir state;
  CampaignJob job;
  job.id = 3;
  job.metrics = {{"first", "first=([0-9]+)"},
                 {"loss", "loss=([0-9.]+)"},
                 {"never", "never=([0-9]+)"},
                 {"broken", "unclosed=(["},
                 {"step", "step ([0-9]+)"}};
  state.write("logs/3.log",
              "first=1\nstep 1 loss=0.9\nfirst=2\nstep 2 loss=0.5\nstep 3\n\n");
  std::vector<std::string> warnings;
  MetricPatterns patterns;
  CollectedJobs collected(state.path());
  JobMetrics metrics = job_metrics(state.path(), job, collected, patterns,
                                   [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(metrics.patterns, (Params{{"first", "2"}, {"loss", "0.5"}, {"step", "3"}}));
  EXPECT_TRUE(warnings.empty());
}

// Enough jobs for every reader to claim some: each job's own numbers, and
// what was passed over said job by job in the jobs' order.
TEST(JobsMetrics, EachJobGetsItsOwnNumbersAndWarningsComeInTheJobsOrder) {
  TempDir state;
  std::vector<CampaignJob> jobs(700);
  std::vector<const CampaignJob*> order;
  std::vector<std::string> expected_warnings;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CampaignJob& job = jobs[i];
    // Ids not in the order asked, so that order is the one kept.
    job.id = static_cast<JobId>(jobs.size() - i);
    job.metrics = {{"loss", "loss=([0-9]+)"}};
    state.write(fmt::format("logs/{}.log", job.id), fmt::format("loss={}\n", job.id * 2));
    state.write(fmt::format("outputs/{}/r.json", job.id), fmt::format(R"({{"n": {}}})", job.id));
    if (i % 97 == 5) {
      std::string big = state.write(fmt::format("outputs/{}/big.json", job.id), "{");
      ASSERT_EQ(::truncate(big.c_str(), 65 * 1024 * 1024), 0);
      expected_warnings.push_back(fmt::format("#{}: its output is passed over: {} is 65 MiB, more "
                                              "than the 64 MiB a JSON file is read to",
                                              job.id, big));
    }
    order.push_back(&job);
  }
  std::vector<std::string> warnings;
  std::vector<JobMetrics> metrics =
      jobs_metrics(state.path(), order, [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_EQ(metrics.size(), jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(metrics[i].files, (Params{{"n", std::to_string(jobs[i].id)}})) << i;
    EXPECT_EQ(metrics[i].patterns, (Params{{"loss", std::to_string(jobs[i].id * 2)}})) << i;
  }
  EXPECT_EQ(warnings, expected_warnings);
}

TEST(MetricPatterns, CompilesEachTextOnceAndRefusesWhatCannotBeAMetric) {
  MetricPatterns patterns;
  const Pattern* loss = patterns.find("loss=([0-9.]+)");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->text(), "loss=([0-9.]+)");
  EXPECT_EQ(patterns.find("loss=([0-9.]+)"), loss);
  EXPECT_EQ(patterns.find("no group"), nullptr);
  EXPECT_EQ(patterns.find("unclosed=(["), nullptr);
  EXPECT_EQ(patterns.find("no group"), nullptr);
}

// A job of each kind of name: parameters, `metrics:` patterns and a
// collected file's fields that clash with each other and the fixed columns.
Campaign clashing_campaign() {
  Campaign campaign;
  CampaignJob job;
  job.id = 1;
  job.host = "node01";
  job.params = {{"batch", "8"}, {"host", "big"}, {"file.loss", "x"}};
  job.outcome = JobOutcome::succeeded;
  job.exit = 0;
  job.end = SystemTime();
  campaign.jobs.push_back(job);
  return campaign;
}

JobMetrics clashing_metrics(const CampaignJob&) {
  return JobMetrics{{{"loss", "0.5"}, {"exit", "3"}, {"batch", "9"}},
                    {{"batch", "8"}, {"id", "41"}, {"loss", "0.25"}, {"acc", "0.9"}}};
}

TEST(ResultsTable, NoTwoColumnsShareANameParametersKeepTheirsFileFieldsGetAPrefix) {
  ResultsTable table = results_table(clashing_campaign(), clashing_metrics);
  EXPECT_EQ(table.columns, (std::vector<std::string>{
                               "id", "batch", "param.host", "file.loss", "host", "slot", "outcome",
                               "exit", "duration_s", "attempts", "file.batch", "file.id",
                               "file.loss.2", "acc", "loss", "metrics.exit", "metrics.batch"}));
  EXPECT_EQ(table.parameters, (std::vector<std::string>{"batch", "param.host", "file.loss"}));
  ASSERT_GE(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0],
            (std::vector<std::string>{"1", "8", "big", "x", "node01", "", "succeeded", "0", "0.000",
                                      "1", "8", "41", "0.25", "0.9", "0.5", "3", "9"}));
  // Every format names each column once: JSON lines keep every value.
  std::string jsonl = format_results(table, ResultsFormat::jsonl);
  EXPECT_EQ(nlohmann::json::parse(jsonl).size(), table.columns.size()) << jsonl;
  std::string csv = format_results(table, ResultsFormat::csv);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "id,batch,param.host,file.loss,host,slot,outcome,exit,duration_s,attempts,file.batch,"
            "file.id,file.loss.2,acc,loss,metrics.exit,metrics.batch");
}

// A service torn down at the end of its run, and a job.
class ResultsWithAService : public ::testing::Test {
 protected:
  void SetUp() override {
    Journal journal = testing::value_of(Journal::open(state.path()));
    ASSERT_TRUE(journal.run_start("queue", "hosts.yaml", "queue.yaml").ok());
    JobStartRecord service = start(1, {});
    service.service = "db";
    ASSERT_TRUE(journal.job_start(service).ok());
    ASSERT_TRUE(journal.job_start(start(2, {{"batch", "8"}})).ok());
    ASSERT_TRUE(journal.job_end(2, JobExit::exited(0), milliseconds(1000)).ok());
    JobExit stopped = JobExit::killed("TERM");
    stopped.cancelled = true;
    ASSERT_TRUE(journal.job_end(1, stopped, milliseconds(3000)).ok());
  }

  TempDir state;
};

TEST_F(ResultsWithAService, ResultsAreAboutJobsServicesOnlyWhenAskedWithTheirState) {
  Campaign campaign = testing::value_of(load_campaign(state.path(), [](long) { return false; }));
  EXPECT_EQ(format_results(read_results(campaign), ResultsFormat::csv),
            "id,batch,host,slot,outcome,exit,duration_s,attempts\n"
            "2,8,localhost,localhost #0,succeeded,0,1.000,1\n");
  EXPECT_EQ(format_results(read_results(campaign, ServiceRows::included), ResultsFormat::csv),
            "id,service,batch,host,slot,outcome,exit,duration_s,attempts\n"
            "1,db,,localhost,localhost #0,stopped,SIGTERM,3.000,1\n"
            "2,,8,localhost,localhost #0,succeeded,0,1.000,1\n");
}

}  // namespace
}  // namespace runner
