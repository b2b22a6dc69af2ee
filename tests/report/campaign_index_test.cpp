// A campaign read through the journal's checkpoint says what the whole
// journal says: `runner status` of every run, and what --resume finds
// unfinished, after every record, with a checkpoint written at each reading
// and the journal rotated on the way.
#include "runner/report/campaign_index.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "runner/report/status_view.h"
#include "runner/state/journal.h"
#include "runner/state/journal_checkpoint.h"
#include "runner/state/journal_replay.h"
#include "runner/state/state_dir.h"
#include "support/temp_dir.h"
#include "support/value_of.h"
#include "typed_records.h"

namespace runner {
namespace {

using nlohmann::json;
using testing::TempDir;

// Seconds after 10:00:00 as a journal time.
std::string at(int seconds) {
  return fmt::format("2024-05-01T{:02}:{:02}:{:02}.000Z", 10 + seconds / 3600, seconds / 60 % 60,
                     seconds % 60);
}

json record(const std::string& event, int time, json fields) {
  json line = {{"event", event}, {"time", at(time)}};
  line.update(fields);
  return line;
}

json run_start(const std::string& run, int time, bool with_slots = true) {
  json fields = {{"run", run},        {"pid", run == "r2" ? 2 : 1}, {"mode", "queue"},
                 {"hosts_file", "h"}, {"queue_file", "q.yaml"},     {"cwd", "/c"}};
  if (with_slots) {
    json slots = json::array();
    for (int host = 1; host <= 2; ++host)
      for (int gpu = 0; gpu < 2; ++gpu)
        slots.push_back({{"label", fmt::format("n{} gpu={}", host, gpu)},
                         {"host", fmt::format("n{}", host)},
                         {"index", gpu},
                         {"params", {{"gpu", std::to_string(gpu)}}}});
    fields["slots"] = slots;
  }
  return record("run_start", time, fields);
}

json job_start(int job, const std::string& run, int time, int host, int gpu, int attempt = 1,
               json extra = json::object()) {
  json fields = {{"job", job},
                 {"run", run},
                 {"command", fmt::format("train --job {}", job)},
                 {"slot", fmt::format("n{} gpu={}", host, gpu)},
                 {"host", fmt::format("n{}", host)},
                 {"slot_index", gpu},
                 {"params", {{"model", "m" + std::to_string(job % 3)}}},
                 {"line", job},
                 {"template", "train --job <<n>>"},
                 {"slots_needed", 1},
                 {"attempt", attempt},
                 {"requeues", 0}};
  fields.update(extra);
  return record("job_start", time, fields);
}

json job_taken_ahead(int job, const std::string& run, int time) {
  return record("job_taken_ahead", time,
                {{"job", job},
                 {"run", run},
                 {"params", {{"model", "m" + std::to_string(job % 3)}}},
                 {"line", job},
                 {"template", "train --job <<n>>"},
                 {"slots_needed", 1}});
}

json job_end(int job, int time, json exit, int ms, bool rerun = false, bool lost = false) {
  return record("job_end", time,
                {{"job", job},
                 {"exit", exit},
                 {"signal", nullptr},
                 {"error", lost ? json("connection dropped") : json(nullptr)},
                 {"lost", lost},
                 {"timed_out", false},
                 {"cancelled", false},
                 {"rerun", rerun},
                 {"duration_ms", ms}});
}

// Two runs of a campaign: r1 dies with #9 running and #10 waiting to run
// again; r2 (--resume) ends them and runs them again, and dies with #18
// taken ahead of need and never started. On the way: jobs taken ahead, jobs that
// succeed, fail, fail and are retried, are lost with their host, a service,
// a gang job, outputs recorded after an end, GPU figures recorded after an
// end and the next job's start.
std::vector<json> campaign_records() {
  std::vector<json> r;
  r.push_back(run_start("r1", 0));
  int t = 1;
  for (int job = 1; job <= 8; ++job) {
    int host = 1 + job % 2, gpu = job / 2 % 2;
    r.push_back(job_start(job, "r1", t, host, gpu));
    if (job == 1)  // #2 to #4 taken ahead of need: out of the queue, not started
      for (int ahead = 2; ahead <= 4; ++ahead) r.push_back(job_taken_ahead(ahead, "r1", t));
    r.push_back(record("job_pgid", t, {{"job", job}, {"pgid", 100 + job}}));
    bool fails = job == 3 || job == 6;
    r.push_back(job_end(job, t + 5, fails ? json(1) : json(0), 5000, job == 6));
    if (job == 4)
      r.push_back(record("outputs", t + 6,
                         {{"job", 4},
                          {"dir", "/c/q.runner/outputs/4"},
                          {"files", {{{"path", "r.csv"}, {"size", 10}, {"sha256", "ab"}}}},
                          {"missing", nullptr},
                          {"error", nullptr}}));
    if (job == 8)
      r.push_back(record("job_gpu", t + 6,
                         {{"job", 7},
                          {"attempt", 1},
                          {"gpu",
                           {{"energy_j", 640.5},
                            {"power_mean_w", 128.1},
                            {"power_max_w", 300},
                            {"util_mean", 60},
                            {"memory_max_mib", 1000},
                            {"seconds", 5},
                            {"gpus", 1}}}}));
    t += 3;
  }
  r.push_back(job_start(6, "r1", t, 1, 1, 2));  // its retry fails for good
  r.push_back(job_end(6, t + 2, 2, 2000));
  r.push_back(job_start(11, "r1", t, 2, 0, 1, {{"service", "dht"}}));
  r.push_back(record("service_ready", t + 1,
                     {{"job", 11}, {"waited_ms", 900}, {"variables", {{"port", "4000"}}}}));
  r.push_back(job_start(12, "r1", t + 2, 1, 0, 1,
                        {{"nodes", 2},
                         {"tasks",
                          {{{"rank", 0},
                            {"host", "n1"},
                            {"slot", "n1 gpu=0"},
                            {"slot_indices", {0}},
                            {"command", "torchrun 0"}},
                           {{"rank", 1},
                            {"host", "n2"},
                            {"slot", "n2 gpu=1"},
                            {"slot_indices", {1}},
                            {"command", "torchrun 1"}}}}}));
  r.push_back(record("job_pgid", t + 2, {{"job", 12}, {"pgid", 300}}));
  r.push_back(record("job_pgid", t + 3, {{"job", 12}, {"pgid", 301}, {"rank", 1}}));
  r.push_back(job_end(12, t + 9, 0, 7000));
  r.push_back(job_start(9, "r1", t + 10, 2, 1));
  r.push_back(job_start(10, "r1", t + 10, 1, 1));
  r.push_back(record("host_failed", t + 11, {{"host", "n1"}, {"message", "refused"}}));
  r.push_back(job_end(10, t + 11, nullptr, 1000, true, true));  // lost; r1 dies before its rerun
  t += 20;
  r.push_back(run_start("r2", t));
  r.push_back(job_end(9, t, nullptr, 0, true, true));
  r.push_back(job_start(9, "r2", t + 1, 1, 0, 2));
  r.push_back(job_start(10, "r2", t + 1, 1, 1, 2));
  r.push_back(job_end(9, t + 4, 0, 3000));
  for (int job = 13; job <= 16; ++job) {
    r.push_back(job_start(job, "r2", t + job, 2, job % 2));
    r.push_back(
        job_end(job, t + job + 1, job == 15 ? json(nullptr) : json(0), 1000, false, job == 15));
  }
  r.push_back(job_start(17, "r2", t + 20, 2, 0));  // still running
  r.push_back(job_taken_ahead(18, "r2", t + 20));  // never started
  return r;
}

// The status of every run, and what --resume finds unfinished.
std::string views(const Campaign& campaign, const std::vector<JournalRecord>& records) {
  SystemTime now = *parse_utc_time(at(3000));
  std::string text;
  for (const CampaignRun& run : campaign.runs)
    text += status_json(run_status(campaign, run, 0, now), "/c/q.runner").dump(1) + "\n";
  JournalReplay replay = replay_journal(records);
  for (const UnfinishedJob& job : replay.unfinished)
    text += fmt::format("unfinished #{} on {} pgid {} running {} start {}\n", job.id, job.host,
                        job.group.id, job.running, journal_line(job.start));
  for (const OpenRun& run : replay.open_runs) text += "open run " + run.run + "\n";
  return text;
}

void append(const std::string& path, const json& record) {
  std::ofstream(path, std::ios::app) << record.dump() << "\n";
}

// r2's process lives, r1's is gone.
bool r2_alive(long pid) { return pid == 2; }

TEST(CampaignIndex, SaysWhatTheWholeJournalSaysAfterEveryRecord) {
  TempDir dir;
  std::vector<json> all = campaign_records();
  std::vector<json> so_far;
  int sealed = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    append(journal_path(dir.path()), all[i]);
    so_far.push_back(all[i]);
    if (i % 7 == 6) {
      // The writer seals the live file now and then.
      std::filesystem::create_directories(sealed_segments_dir(dir.path()));
      std::filesystem::rename(journal_path(dir.path()), sealed_segment_path(dir.path(), ++sealed));
    }
    RecentCampaign recent =
        testing::value_of(load_recent_campaign(dir.path(), r2_alive, /*checkpoint_after=*/1));
    Campaign whole = campaign_from_records(testing::typed_records(so_far), r2_alive);
    whole.state_dir = dir.path();
    ASSERT_EQ(views(recent.campaign, recent.records), views(whole, testing::typed_records(so_far)))
        << "after record " << i << ": " << all[i].dump();
  }
  // The checkpoint kept only what still matters (the jobs that ended last
  // in r2, still running, among it: their GPU figures may still come).
  std::optional<JournalCheckpoint> checkpoint = load_journal_checkpoint(dir.path());
  ASSERT_TRUE(checkpoint);
  EXPECT_LT(checkpoint->records.size(), all.size() * 3 / 5);
  EXPECT_GT(sealed, 3);
}

TEST(CampaignIndex, ASealedJournalReadWithoutACheckpointIsCompactedASegmentAtATime) {
  TempDir dir;
  std::vector<json> all = campaign_records();
  int sealed = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    append(journal_path(dir.path()), all[i]);
    if (i % 5 == 4) {
      std::filesystem::create_directories(sealed_segments_dir(dir.path()));
      std::filesystem::rename(journal_path(dir.path()), sealed_segment_path(dir.path(), ++sealed));
    }
  }
  RecentCampaign recent = testing::value_of(load_recent_campaign(dir.path(), r2_alive));
  Campaign whole = campaign_from_records(testing::typed_records(all), r2_alive);
  whole.state_dir = dir.path();
  EXPECT_EQ(views(recent.campaign, recent.records), views(whole, testing::typed_records(all)));
  EXPECT_LT(recent.records.size(), all.size() * 3 / 5);
  EXPECT_GT(sealed, 5);
}

TEST(CampaignIndex, AJournalThatIsNotTheCheckpointsAnyMoreIsReadFromItsStart) {
  TempDir dir;
  std::vector<json> all = campaign_records();
  for (const json& line : all) append(journal_path(dir.path()), line);
  static_cast<void>(testing::value_of(load_recent_campaign(dir.path(), r2_alive, 1)));
  ASSERT_TRUE(load_journal_checkpoint(dir.path()));
  // Another campaign in the same place: a shorter journal of one run.
  std::filesystem::remove(journal_path(dir.path()));
  std::vector<json> other = {run_start("r3", 0), job_start(1, "r3", 1, 1, 0)};
  for (const json& line : other) append(journal_path(dir.path()), line);
  RecentCampaign recent = testing::value_of(load_recent_campaign(dir.path(), r2_alive, 1));
  ASSERT_EQ(recent.campaign.runs.size(), 1u);
  EXPECT_EQ(recent.campaign.runs[0].id, "r3");
  EXPECT_EQ(views(recent.campaign, recent.records),
            views(campaign_from_records(testing::typed_records(other), r2_alive),
                  testing::typed_records(other)));
}

TEST(CampaignIndex, AnOlderJournalsRunWithoutItsSlotsKeepsTheSlotsItsJobsUsed) {
  TempDir dir;
  std::vector<json> all = {run_start("r1", 0, /*with_slots=*/false)};
  for (int job = 1; job <= 4; ++job) {
    all.push_back(job_start(job, "r1", job, 1, job % 2));
    all.push_back(job_end(job, job + 1, 0, 1000));
  }
  all.push_back(record("run_end", 6, {{"run", "r1"}, {"status", "ok"}}));
  for (const json& line : all) append(journal_path(dir.path()), line);
  static_cast<void>(testing::value_of(load_recent_campaign(dir.path(), r2_alive, 1)));
  RecentCampaign recent = testing::value_of(load_recent_campaign(dir.path(), r2_alive, 1));
  EXPECT_TRUE(recent.campaign.jobs.empty());
  EXPECT_EQ(views(recent.campaign, recent.records),
            views(campaign_from_records(testing::typed_records(all), r2_alive),
                  testing::typed_records(all)));
}

}  // namespace
}  // namespace runner
