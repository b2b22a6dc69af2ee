// Reading a campaign back from its journal: runs, jobs, outcomes, live and
// dead runners, log tails and job ids.
#include "runner/report/campaign.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "gang_journal.h"
#include "runner/state/journal.h"
#include "runner/state/state_dir.h"
#include "support/temp_dir.h"
#include "support/value_of.h"
#include "typed_records.h"

namespace runner {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using testing::TempDir;

json record(const std::string& event, const std::string& time, json fields) {
  fields["event"] = event;
  fields["time"] = time;
  return fields;
}

std::vector<json> two_slot_run(long pid) {
  return {
      record("run_start", "2024-05-01T10:00:00.000Z",
             {{"run", "r1"},
              {"pid", pid},
              {"mode", "queue"},
              {"hosts_file", "hosts.yaml"},
              {"queue_file", "queue.yaml"},
              {"cwd", "/campaign"},
              {"slots",
               {{{"label", "node01 gpu=0"},
                 {"host", "node01"},
                 {"index", 0},
                 {"params", {{"gpu", "0"}}}},
                {{"label", "node01 gpu=1"},
                 {"host", "node01"},
                 {"index", 1},
                 {"params", {{"gpu", "1"}}}}}},
              {"queued", 4}}),
      record("job_start", "2024-05-01T10:00:01.000Z",
             {{"job", 1},
              {"run", "r1"},
              {"command", "train a"},
              {"slot", "node01 gpu=0"},
              {"host", "node01"},
              {"slot_index", 0},
              {"params", {{"model", "a"}}},
              {"line", 2}}),
      record("job_pgid", "2024-05-01T10:00:01.010Z", {{"job", 1}, {"pgid", 4242}}),
      record("job_start", "2024-05-01T10:00:01.500Z",
             {{"job", 2},
              {"run", "r1"},
              {"command", "train b"},
              {"slot", "node01 gpu=1"},
              {"host", "node01"},
              {"slot_index", 1},
              {"params", json::object()},
              {"line", 2}}),
      record("job_end", "2024-05-01T10:01:01.000Z",
             {{"job", 1},
              {"exit", 0},
              {"signal", nullptr},
              {"error", nullptr},
              {"lost", false},
              {"duration_ms", 60000}}),
      record("job_end", "2024-05-01T10:00:31.500Z",
             {{"job", 2},
              {"exit", 3},
              {"signal", nullptr},
              {"error", nullptr},
              {"lost", false},
              {"duration_ms", 30000}}),
      record("job_start", "2024-05-01T10:01:02.000Z",
             {{"job", 3},
              {"run", "r1"},
              {"command", "train c"},
              {"slot", "node01 gpu=0,1"},
              {"host", "node01"},
              {"slot_index", 0},
              {"slot_indices", {0, 1}},
              {"params", json::object()},
              {"line", 3}}),
  };
}

TEST(Campaign, FoldsTheJournalIntoRunsAndJobs) {
  Campaign campaign = campaign_from_records(testing::typed_records(two_slot_run(77)),
                                            [](long pid) { return pid == 77; });
  ASSERT_EQ(campaign.runs.size(), 1u);
  const CampaignRun& run = campaign.runs[0];
  EXPECT_EQ(run.id, "r1");
  EXPECT_EQ(run.mode, "queue");
  EXPECT_EQ(run.cwd, "/campaign");
  EXPECT_TRUE(run.alive);
  EXPECT_EQ(run.queued_at_start, 4u);
  ASSERT_EQ(run.slots.size(), 2u);
  EXPECT_EQ(run.slots[1].label, "node01 gpu=1");
  EXPECT_EQ(run.slots[1].params, (Params{{"gpu", "1"}}));
  EXPECT_EQ(run.jobs.size(), 3u);

  const CampaignJob* one = campaign.find_job(1);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->outcome, JobOutcome::succeeded);
  EXPECT_EQ(one->pgid, 4242);
  EXPECT_EQ(one->duration, milliseconds(60000));
  EXPECT_EQ(one->params, (Params{{"model", "a"}}));
  EXPECT_EQ(campaign.find_job(2)->outcome, JobOutcome::failed);
  EXPECT_EQ(describe_end(*campaign.find_job(2)), "exit 3");
  const CampaignJob* three = campaign.find_job(3);
  EXPECT_EQ(three->outcome, JobOutcome::running);
  EXPECT_EQ(three->slot_indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(campaign.find_job(4), nullptr);
}

TEST(Campaign, AJobsTimeCountsFromItsProcessStart) {
  Campaign campaign = campaign_from_records(testing::typed_records(two_slot_run(77)),
                                            [](long pid) { return pid == 77; });
  // Job 1 was sent at 10:00:01.000; its process reported its group 10 ms
  // later: that is when it started. Job 2 never reported one.
  EXPECT_EQ(campaign.find_job(1)->start, *parse_utc_time("2024-05-01T10:00:01.010Z"));
  EXPECT_EQ(campaign.find_job(2)->start, *parse_utc_time("2024-05-01T10:00:01.500Z"));
}

TEST(Campaign, ARunnerThatIsGoneLeavesItsJobsUnknown) {
  Campaign campaign =
      campaign_from_records(testing::typed_records(two_slot_run(77)), [](long) { return false; });
  ASSERT_GE(campaign.runs.size(), 1u);
  EXPECT_FALSE(campaign.runs[0].alive);
  EXPECT_EQ(campaign.find_job(3)->outcome, JobOutcome::unknown);
  EXPECT_EQ(describe_end(*campaign.find_job(3)), "unknown: the runner stopped before it ended");
  // Its bar ends at the run's last record.
  EXPECT_EQ(job_end_time(*campaign.find_job(3), &campaign.runs[0], SystemTime::max()),
            *parse_utc_time("2024-05-01T10:01:02.000Z"));
}

TEST(Campaign, AFinishedRunIsNotAliveWhateverItsPid) {
  std::vector<json> records = two_slot_run(77);
  records.push_back(
      record("run_end", "2024-05-01T10:02:00.000Z", {{"run", "r1"}, {"status", "failed"}}));
  Campaign campaign =
      campaign_from_records(testing::typed_records(records), [](long) { return true; });
  ASSERT_GE(campaign.runs.size(), 1u);
  EXPECT_FALSE(campaign.runs[0].alive);
  EXPECT_EQ(campaign.runs[0].status, "failed");
  EXPECT_EQ(campaign.runs[0].end, parse_utc_time("2024-05-01T10:02:00.000Z"));
}

TEST(Campaign, LostJobsAndHostFailures) {
  std::vector<json> records = two_slot_run(77);
  records.push_back(record("host_failed", "2024-05-01T10:01:03.000Z",
                           {{"host", "node01"}, {"message", "node01: connection lost"}}));
  records.push_back(record("job_end", "2024-05-01T10:01:03.000Z",
                           {{"job", 3},
                            {"exit", nullptr},
                            {"signal", nullptr},
                            {"error", "connection lost"},
                            {"lost", true},
                            {"duration_ms", 1000}}));
  Campaign campaign =
      campaign_from_records(testing::typed_records(records), [](long) { return true; });
  EXPECT_EQ(campaign.find_job(3)->outcome, JobOutcome::lost);
  EXPECT_EQ(describe_end(*campaign.find_job(3)), "lost: connection lost");
  ASSERT_GE(campaign.runs.size(), 1u);
  ASSERT_EQ(campaign.runs[0].host_failures.size(), 1u);
  EXPECT_EQ(campaign.runs[0].host_failures[0].second, "node01: connection lost");
}

TEST(Campaign, SlotsComeFromJobsWhenTheRunStartDoesNotListThem) {
  std::vector<json> records = two_slot_run(77);
  ASSERT_GE(records.size(), 1u);
  records[0].erase("slots");
  Campaign campaign =
      campaign_from_records(testing::typed_records(records), [](long) { return true; });
  ASSERT_GE(campaign.runs.size(), 1u);
  const auto& slots = campaign.runs[0].slots;
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].label, "node01 gpu=0");
  EXPECT_EQ(slots[1].label, "node01 gpu=1");
}

TEST(Campaign, ReadsWhatTheJournalWrites) {
  TempDir dir;
  std::string state = dir.file("q.runner");
  EXPECT_TRUE(ensure_state_dir(state).ok());
  {
    Journal journal = testing::value_of(Journal::open(state));
    RunStartRecord start;
    start.mode = "broadcast";
    start.hosts_file = "h.yaml";
    start.queue_file = "q.yaml";
    start.slots = std::vector<RunSlotRecord>{{"n1 #0", "n1", 0, {}}, {"n1 #1", "n1", 1, {}}};
    start.queued = 2;
    ASSERT_TRUE(journal.run_start(start));
    JobStartRecord job;
    job.job = journal.next_job_id();
    job.command = "echo hi";
    job.slot = "n1 #1";
    job.host = "n1";
    job.slot_indices = {1};
    ASSERT_TRUE(journal.job_start(job));
    JobExit exit = JobExit::killed("KILL");
    ASSERT_TRUE(journal.job_end(job.job, exit, milliseconds(1500)));
    ASSERT_TRUE(journal.run_end("interrupted"));
  }
  Campaign campaign = testing::value_of(load_campaign(state));
  ASSERT_EQ(campaign.runs.size(), 1u);
  EXPECT_EQ(campaign.state_dir, state);
  EXPECT_EQ(campaign.runs[0].mode, "broadcast");
  EXPECT_EQ(campaign.runs[0].pid, static_cast<long>(getpid()));
  EXPECT_EQ(campaign.runs[0].slots.size(), 2u);
  EXPECT_FALSE(campaign.runs[0].cwd.empty());
  EXPECT_EQ(campaign.runs[0].status, "interrupted");
  ASSERT_EQ(campaign.jobs.size(), 1u);
  EXPECT_EQ(campaign.jobs[0].slot_indices, (std::vector<int>{1}));
  EXPECT_EQ(describe_end(campaign.jobs[0]), "killed by KILL");
  EXPECT_EQ(campaign.jobs[0].duration, milliseconds(1500));
  EXPECT_TRUE(testing::value_of(load_campaign(dir.file("absent"))).runs.empty());
}

TEST(Campaign, KeepsExactBytesAndNamesJournalLinesThatAreNotWholeRecords) {
  TempDir dir;
  std::string state = dir.file("q.runner");
  EXPECT_TRUE(ensure_state_dir(state).ok());
  {
    Journal journal = testing::value_of(Journal::open(state));
    JobStartRecord job;
    job.job = journal.next_job_id();
    job.command = "echo caf\xe9";
    job.params = {{"word", "caf\xe9"}};
    ASSERT_TRUE(journal.job_start(job));
  }
  std::string path = journal_path(state);
  dir.write("q.runner/journal.jsonl", dir.read("q.runner/journal.jsonl") + R"({"event":"job_e)");
  Campaign campaign = testing::value_of(load_campaign(state));
  ASSERT_EQ(campaign.jobs.size(), 1u);
  EXPECT_EQ(campaign.jobs[0].command, "echo caf\xe9");
  EXPECT_EQ(campaign.jobs[0].params, (Params{{"word", "caf\xe9"}}));
  ASSERT_EQ(campaign.skipped_lines.size(), 1u);
  EXPECT_EQ(skipped_lines_warning(campaign),
            "runner: warning: " + path +
                " line 2: not a whole record (cut short when it was written); skipped\n");
}

TEST(Campaign, ReadsAGangJobAsOneJobWithATaskPerRank) {
  Campaign campaign = campaign_from_records(testing::journal_records(testing::k_gang_journal),
                                            [](long) { return true; });
  ASSERT_EQ(campaign.jobs.size(), 3u);
  const CampaignJob& gang = *campaign.find_job(1);
  ASSERT_TRUE(gang.is_gang());
  ASSERT_EQ(gang.tasks.size(), 2u);
  EXPECT_EQ(gang.tasks[0].rank, 0);
  EXPECT_EQ(gang.tasks[0].host, "node01");
  EXPECT_EQ(gang.tasks[0].slot, "node01 gpu=0,1");
  EXPECT_EQ(gang.tasks[0].pgid, 4100);
  EXPECT_EQ(gang.tasks[1].rank, 1);
  EXPECT_EQ(gang.tasks[1].host, "node02");
  EXPECT_EQ(gang.tasks[1].slot_indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(gang.tasks[1].command, "torchrun --node_rank=1 train.py");
  EXPECT_EQ(gang.tasks[1].pgid, 4200);
  EXPECT_EQ(gang.tasks[1].start, *parse_utc_time("2024-05-01T10:00:01.300Z"));
  // The job itself is rank 0's: its pgid and start are not overwritten by rank 1's.
  EXPECT_EQ(gang.pgid, 4100);
  EXPECT_EQ(gang.start, *parse_utc_time("2024-05-01T10:00:01.100Z"));
  EXPECT_EQ(gang.outcome, JobOutcome::failed);
  EXPECT_EQ(gang.failed_rank, 1);
  EXPECT_EQ(describe_end(gang), "rank 1: exit 1");
  EXPECT_EQ(describe_placement(gang), "2 nodes: node01, node02");
  EXPECT_EQ(end_log_path("q.runner", gang), "q.runner/logs/1.1.log");

  const CampaignJob& running = *campaign.find_job(3);
  EXPECT_EQ(running.outcome, JobOutcome::running);
  EXPECT_EQ(describe_placement(running), "2 nodes: node02, node01");
  EXPECT_EQ(end_log_path("q.runner", running), "q.runner/logs/3.0.log");
  EXPECT_EQ(tasks_of(running).size(), 2u);
}

TEST(Campaign, AJobWithoutNodesHasNoTasksAndOneLog) {
  Campaign campaign = campaign_from_records(testing::journal_records(testing::k_gang_journal),
                                            [](long) { return true; });
  const CampaignJob& plain = *campaign.find_job(2);
  EXPECT_FALSE(plain.is_gang());
  EXPECT_EQ(plain.failed_rank, std::nullopt);
  EXPECT_EQ(describe_placement(plain), "node01 gpu=0");
  EXPECT_EQ(end_log_path("q.runner", plain), "q.runner/logs/2.log");
  std::vector<CampaignTask> tasks = tasks_of(plain);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].host, "node01");
  EXPECT_EQ(tasks[0].slot_indices, (std::vector<int>{0}));
  for (const CampaignJob& job :
       campaign_from_records(testing::typed_records(two_slot_run(77))).jobs) {
    EXPECT_FALSE(job.is_gang());
    EXPECT_EQ(describe_placement(job), job.slot);
  }
}

TEST(Campaign, UtcTimesRoundTrip) {
  auto time = SystemTime(milliseconds(1714566896789));
  EXPECT_EQ(parse_utc_time(format_utc_time(time)), time);
  EXPECT_EQ(parse_utc_time("2024-05-01T12:34:56.789Z"), time);
  EXPECT_EQ(parse_utc_time("yesterday"), std::nullopt);
}

TEST(Campaign, UtcTimesOfOtherFormsReadAsTimegmReadsThem) {
  auto at = [](long long ms) { return SystemTime(milliseconds(ms)); };
  EXPECT_EQ(parse_utc_time("1970-01-01T00:00:00.000Z"), at(0));
  EXPECT_EQ(parse_utc_time("2024-02-29T23:59:59.999Z"), at(1709251199999));
  EXPECT_EQ(parse_utc_time("2024-05-01T12:34:56Z"), at(1714566896000));
  EXPECT_EQ(parse_utc_time("2024-05-01T12:34:56.7Z"), at(1714566896007));
  // Past the month's end, or past the year's, goes on into the next.
  EXPECT_EQ(parse_utc_time("2023-02-31T00:00:00.000Z"), parse_utc_time("2023-03-03T00:00:00.000Z"));
  EXPECT_EQ(parse_utc_time("2023-13-01T00:00:00.000Z"), parse_utc_time("2024-01-01T00:00:00.000Z"));
  EXPECT_EQ(parse_utc_time("2024-05-01T24:00:00.000Z"), parse_utc_time("2024-05-02T00:00:00.000Z"));
  EXPECT_EQ(parse_utc_time("2024-05-01T12:34"), std::nullopt);
}

TEST(Campaign, LogTailKeepsTheLastLinesWithoutEscapes) {
  TempDir dir;
  std::string text;
  for (int i = 1; i <= 30; ++i) text += "line " + std::to_string(i) + "\n";
  text += "\x1b[1;31mred\x1b[0m\n";
  text += "progress 10%\rprogress 50%\rprogress 100%\r\n";
  text += "\x1b]0;title\x07no newline at the end";
  dir.write("a.log", text);
  EXPECT_EQ(log_tail(dir.file("a.log"), 5),
            "red\nprogress 10%\nprogress 50%\nprogress 100%\nno newline at the end\n");
  // A window that starts inside a line drops that line.
  dir.write("b.log", "first line is long\nsecond\nthird\n");
  EXPECT_EQ(log_tail(dir.file("b.log"), 10, 13), "second\nthird\n");
  EXPECT_EQ(log_tail(dir.file("missing.log")), "");
}

TEST(Campaign, JobIds) {
  EXPECT_EQ(parse_job_id("12"), 12u);
  EXPECT_EQ(parse_job_id("#12"), 12u);
  EXPECT_EQ(parse_job_id("0"), std::nullopt);
  EXPECT_EQ(parse_job_id("12a"), std::nullopt);
  EXPECT_EQ(parse_job_id(""), std::nullopt);
  EXPECT_EQ(job_log_path("q.runner", 7), "q.runner/logs/7.log");
  EXPECT_EQ(task_log_path("q.runner", 7, 1), "q.runner/logs/7.1.log");
}

}  // namespace
}  // namespace runner
