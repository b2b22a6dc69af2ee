// `runner status`: counts, slots, ETA and failures of a run, as text and JSON.
#include "runner/report/status_view.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include "gang_journal.h"
#include "typed_records.h"

namespace runner {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

json record(const std::string& event, const std::string& time, json fields) {
  fields["event"] = event;
  fields["time"] = time;
  return fields;
}

json slot(const std::string& label, int index) {
  return {{"label", label},
          {"host", "node01"},
          {"index", index},
          {"params", {{"gpu", std::to_string(index)}}}};
}

json job_start(int id, const std::string& time, int index, const std::string& command) {
  return record("job_start", time,
                {{"job", id},
                 {"run", "r1"},
                 {"command", command},
                 {"slot", "node01 gpu=" + std::to_string(index)},
                 {"host", "node01"},
                 {"slot_index", index},
                 {"params", json::object()},
                 {"line", 1}});
}

json job_end(int id, const std::string& time, json exit, long long ms) {
  return record("job_end", time,
                {{"job", id},
                 {"exit", exit},
                 {"signal", nullptr},
                 {"error", nullptr},
                 {"lost", false},
                 {"duration_ms", ms}});
}

// Two slots: #1 succeeded in 60s, #2 failed after 30s, #3 runs on gpu=0
// since 10:01:02.
std::vector<json> records() {
  return {
      record("run_start", "2024-05-01T10:00:00.000Z",
             {{"run", "r1"},
              {"pid", 77},
              {"mode", "queue"},
              {"hosts_file", "hosts.yaml"},
              {"queue_file", "queue.yaml"},
              {"slots", {slot("node01 gpu=0", 0), slot("node01 gpu=1", 1)}}}),
      job_start(1, "2024-05-01T10:00:01.000Z", 0, "python train.py --model a"),
      job_start(2, "2024-05-01T10:00:01.500Z", 1, "python train.py --model b"),
      job_end(2, "2024-05-01T10:00:31.500Z", 3, 30000),
      job_end(1, "2024-05-01T10:01:01.000Z", 0, 60000),
      job_start(3, "2024-05-01T10:01:02.000Z", 0, "python train.py --model c"),
  };
}

struct StatusView : ::testing::Test {
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
  Campaign campaign =
      campaign_from_records(testing::typed_records(records()), [](long) { return true; });
  SystemTime now = *parse_utc_time("2024-05-01T10:01:32.000Z");
};

TEST_F(StatusView, CountsSlotsAndEta) {
  ASSERT_GE(campaign.runs.size(), 1u);
  RunStatus status = run_status(campaign, campaign.runs[0], 4, now);
  EXPECT_EQ(status.state, "running");
  EXPECT_EQ(status.elapsed, milliseconds(92'000));
  EXPECT_EQ(status.succeeded, 1u);
  EXPECT_EQ(status.failed, 1u);
  ASSERT_EQ(status.running.size(), 1u);
  EXPECT_EQ(status.running[0]->id, 3u);
  EXPECT_EQ(status.busy_slots, 1u);
  ASSERT_EQ(status.slots.size(), 2u);
  EXPECT_EQ(status.slots[0].job, status.running[0]);
  EXPECT_EQ(status.slots[0].jobs, 2u);
  EXPECT_EQ(status.slots[0].busy, milliseconds(90'000));
  EXPECT_EQ(status.slots[1].job, nullptr);
  EXPECT_EQ(status.slots[1].free_since, *parse_utc_time("2024-05-01T10:00:31.500Z"));
  // Mean 45s; 4 queued jobs and 15s left of #3, over two slots.
  EXPECT_EQ(status.eta, milliseconds((4 * 45'000 + 15'000) / 2));
}

TEST_F(StatusView, TableForPeople) {
  ASSERT_GE(campaign.runs.size(), 1u);
  RunStatus status = run_status(campaign, campaign.runs[0], 4, now);
  std::string text = format_status(status, "queue.runner", 100);
  EXPECT_EQ(text,
            "queue run r1 (pid 77): running for 1m 32s, since 2024-05-01 10:00:00\n"
            "jobs: 2 done (1 succeeded, 1 failed) · 1 running · 4 queued · ETA 1m 37s\n"
            "slots: 1 of 2 busy\n"
            "\n"
            "SLOT          STATE    JOB  FOR       BUSY  COMMAND\n"
            "node01 gpu=0  running  #3   30s        97%  python train.py --model c\n"
            "node01 gpu=1  idle     -    1m 00s     32%\n"
            "\n"
            "failed: 1 job\n"
            "  #2 [node01 gpu=1] exit 3 after 30.0s — log: queue.runner/logs/2.log\n"
            "      python train.py --model b\n");
}

TEST_F(StatusView, CommandsAreCutToTheWidth) {
  ASSERT_GE(campaign.runs.size(), 1u);
  RunStatus status = run_status(campaign, campaign.runs[0], 4, now);
  std::string text = format_status(status, "queue.runner", 60);
  EXPECT_NE(text.find("node01 gpu=0  running  #3   30s        97%  python train.py --m…\n"),
            std::string::npos)
      << text;
}

TEST_F(StatusView, JsonForScripts) {
  ASSERT_GE(campaign.runs.size(), 1u);
  RunStatus status = run_status(campaign, campaign.runs[0], 4, now);
  nlohmann::ordered_json j = status_json(status, "queue.runner");
  EXPECT_EQ(j["run"]["id"], "r1");
  EXPECT_EQ(j["run"]["state"], "running");
  EXPECT_EQ(j["run"]["ended"], nullptr);
  EXPECT_EQ(j["jobs"]["done"], 2);
  EXPECT_EQ(j["jobs"]["running"], 1);
  EXPECT_EQ(j["jobs"]["queued"], 4);
  EXPECT_EQ(j["eta_ms"], 97'500);
  ASSERT_EQ(j["slots"].size(), 2u);
  EXPECT_EQ(j["slots"][0]["state"], "running");
  EXPECT_EQ(j["slots"][0]["job"], 3);
  EXPECT_EQ(j["slots"][0]["for_ms"], 30'000);
  EXPECT_EQ(j["slots"][0]["params"]["gpu"], "0");
  EXPECT_EQ(j["slots"][1]["state"], "idle");
  EXPECT_EQ(j["slots"][1]["job"], nullptr);
  EXPECT_EQ(j["running"][0]["command"], "python train.py --model c");
  EXPECT_EQ(j["running"][0]["log"], "queue.runner/logs/3.log");
  EXPECT_EQ(j["failed"][0]["id"], 2);
  EXPECT_EQ(j["failed"][0]["exit"], 3);
}

TEST_F(StatusView, AStoppedRunHasNoEtaAndKeepsItsLastMoment) {
  Campaign dead =
      campaign_from_records(testing::typed_records(records()), [](long) { return false; });
  ASSERT_GE(dead.runs.size(), 1u);
  RunStatus status = run_status(dead, dead.runs[0], 4, now);
  EXPECT_EQ(status.state, "stopped");
  EXPECT_EQ(status.eta, std::nullopt);
  EXPECT_EQ(status.unknown, 1u);
  EXPECT_TRUE(status.running.empty());
  EXPECT_EQ(status.elapsed, milliseconds(62'000)) << "up to its last record";
  EXPECT_NE(format_status(status, "q.runner").find("stopped without finishing after 1m 02s"),
            std::string::npos);
}

TEST_F(StatusView, AJobRunAgainCountsOnceByItsLastAttempt) {
  std::vector<json> rerun = records();
  json lost = job_end(3, "2024-05-01T10:01:10.000Z", nullptr, 8000);
  lost["lost"] = true;
  lost["error"] = "connection to node01 lost";
  lost["rerun"] = true;
  rerun.push_back(lost);
  json again = job_start(3, "2024-05-01T10:01:12.000Z", 1, "python train.py --model c");
  again["attempt"] = 2;
  rerun.push_back(again);
  rerun.push_back(job_end(3, "2024-05-01T10:01:20.000Z", 0, 8000));
  Campaign campaign =
      campaign_from_records(testing::typed_records(rerun), [](long) { return true; });
  ASSERT_EQ(campaign.jobs.size(), 4u) << "one entry per attempt";
  EXPECT_EQ(describe_end(campaign.jobs[2]), "lost: connection to node01 lost, run again");
  EXPECT_EQ(campaign.find_job(3)->attempt, 2);
  ASSERT_GE(campaign.runs.size(), 1u);
  RunStatus status = run_status(campaign, campaign.runs[0], 0, now);
  EXPECT_EQ(status.succeeded, 2u);
  EXPECT_EQ(status.failed, 1u);
  EXPECT_EQ(status.lost, 0u);
  EXPECT_EQ(status.failures.size(), 1u);
  ASSERT_GE(status.slots.size(), 2u);
  EXPECT_EQ(status.slots[0].busy, milliseconds(68'000)) << "the lost attempt's time counts";
  EXPECT_EQ(status.slots[1].busy, milliseconds(38'000)) << "and so does the second attempt's";
}

TEST_F(StatusView, TimedOutAndCancelledSayWhy) {
  std::vector<json> ended = records();
  json timed_out = job_end(3, "2024-05-01T10:01:10.000Z", nullptr, 8000);
  timed_out["signal"] = "TERM";
  timed_out["timed_out"] = true;
  ended.push_back(timed_out);
  Campaign campaign =
      campaign_from_records(testing::typed_records(ended), [](long) { return true; });
  EXPECT_EQ(describe_end(*campaign.find_job(3)), "timed out (killed by TERM)");
  ASSERT_GE(campaign.jobs.size(), 3u);
  campaign.jobs[2].timed_out = false;
  campaign.jobs[2].cancelled = true;
  EXPECT_EQ(describe_end(campaign.jobs[2]), "cancelled (killed by TERM)");
}

TEST_F(StatusView, DownHostsMarkTheirSlots) {
  std::vector<json> with_failure = records();
  with_failure.push_back(record("host_failed", "2024-05-01T10:01:05.000Z",
                                {{"host", "node01"}, {"message", "node01: connection refused"}}));
  Campaign failed =
      campaign_from_records(testing::typed_records(with_failure), [](long) { return true; });
  ASSERT_GE(failed.runs.size(), 1u);
  RunStatus status = run_status(failed, failed.runs[0], 0, now);
  ASSERT_GE(status.slots.size(), 2u);
  EXPECT_EQ(status.slots[1].down, "node01: connection refused");
  std::string text = format_status(status, "q.runner");
  EXPECT_NE(text.find("slots: 1 of 2 busy, 2 down"), std::string::npos) << text;
  EXPECT_NE(text.find("node01 gpu=1  down"), std::string::npos) << text;
  EXPECT_NE(text.find("node01: connection refused"), std::string::npos) << text;
}

TEST_F(StatusView, AGangJobIsOneJobOnItsNodes) {
  Campaign gangs = campaign_from_records(testing::journal_records(testing::k_gang_journal),
                                         [](long) { return true; });
  ASSERT_GE(gangs.runs.size(), 1u);
  RunStatus status =
      run_status(gangs, gangs.runs[0], 0, *parse_utc_time("2024-05-01T10:00:50.000Z"));
  EXPECT_EQ(status.succeeded, 1u);
  EXPECT_EQ(status.failed, 1u);
  ASSERT_EQ(status.running.size(), 1u);
  EXPECT_EQ(status.busy_slots, 2u);
  ASSERT_GE(status.slots.size(), 4u);
  EXPECT_EQ(status.slots[3].jobs, 1u) << "rank 1 of #1 held node02 gpu=1";
  EXPECT_EQ(status.slots[3].busy, milliseconds(29'800)) << "from rank 1's start to the job's end";
  EXPECT_EQ(format_status(status, "q.runner", 100),
            "queue run r1 (pid 77): running for 50.0s, since 2024-05-01 10:00:00\n"
            "jobs: 2 done (1 succeeded, 1 failed) · 1 running · 0 queued · ETA 22s\n"
            "slots: 2 of 4 busy\n"
            "\n"
            "SLOT          STATE    JOB        FOR       BUSY  COMMAND\n"
            "node01 gpu=0  idle     -          8s         80%\n"
            "node01 gpu=1  running  #3 rank 1  10s        79%  true\n"
            "node02 gpu=0  running  #3 rank 0  10s        79%  mpirun --hostfile /tmp/h train.py\n"
            "node02 gpu=1  idle     -          18s        59%\n"
            "\n"
            "running gang jobs:\n"
            "  #3 [2 nodes: node02, node01] running for 10s\n"
            "\n"
            "failed: 1 job\n"
            "  #1 [2 nodes: node01, node02] rank 1: exit 1 after 30.0s — log: "
            "q.runner/logs/1.1.log\n"
            "      torchrun --node_rank=0 train.py\n");

  nlohmann::ordered_json j = status_json(status, "q.runner");
  EXPECT_EQ(j["slots"][1]["job"], 3);
  EXPECT_EQ(j["slots"][1]["rank"], 1);
  EXPECT_FALSE(j["slots"][0].contains("rank"));
  EXPECT_EQ(j["running"][0]["nodes"], 2);
  EXPECT_EQ(j["running"][0]["tasks"][1]["host"], "node01");
  EXPECT_EQ(j["running"][0]["tasks"][1]["log"], "q.runner/logs/3.1.log");
  EXPECT_EQ(j["failed"][0]["failed_rank"], 1);
  EXPECT_EQ(j["failed"][0]["log"], "q.runner/logs/1.1.log");
  ASSERT_GE(campaign.runs.size(), 1u);
  EXPECT_FALSE(status_json(run_status(campaign, campaign.runs[0], 4, now), "q.runner")["running"][0]
                   .contains("nodes"))
      << "a job without nodes: has no gang fields";
}

}  // namespace
}  // namespace runner
