#include "runner/state/journal_replay.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

std::vector<JournalRecord> records(std::initializer_list<const char*> lines) {
  std::vector<JournalRecord> out;
  for (const char* line : lines) {
    Result<JournalRecord> record = read_record(line);
    EXPECT_TRUE(record.ok()) << line;
    if (record) out.push_back(std::move(*record));
  }
  return out;
}

TEST(JournalReplay, FinishedRunLeavesNothing) {
  auto replay = replay_journal(records({
      R"({"event":"run_start","run":"r1","pid":10,"time":"t0"})",
      R"({"event":"job_start","job":1,"run":"r1","host":"a"})",
      R"({"event":"job_pgid","job":1,"pgid":500,"mark":"ab-1"})",
      R"({"event":"job_end","job":1,"exit":0,"rerun":false})",
      R"({"event":"run_end","run":"r1","status":"ok"})",
  }));
  EXPECT_TRUE(replay.unfinished.empty());
  EXPECT_TRUE(replay.open_runs.empty());
}

TEST(JournalReplay, DeadRunLeavesItsRunningAndWaitingJobs) {
  auto replay = replay_journal(records({
      R"({"event":"run_start","run":"r1","pid":10,"time":"t0"})",
      R"({"event":"job_start","job":1,"run":"r1","host":"a","template":"x"})",
      R"({"event":"job_pgid","job":1,"pgid":500,"mark":"ab-1"})",
      R"({"event":"job_start","job":2,"run":"r1","host":"b"})",
      R"({"event":"job_end","job":2,"exit":null,"lost":true,"rerun":true})",
      R"({"event":"job_start","job":3,"run":"r1","host":"b"})",
      R"({"event":"job_end","job":3,"exit":0,"rerun":false})",
      R"({"event":"job_start","job":4,"run":"r1","host":"a"})",
  }));
  ASSERT_EQ(replay.unfinished.size(), 3u);
  EXPECT_EQ(replay.unfinished[0].id, 1u);
  EXPECT_EQ(replay.unfinished[0].group, (ProcessGroup{500, "ab-1"}));
  EXPECT_TRUE(replay.unfinished[0].running);
  EXPECT_EQ(replay.unfinished[0].start.template_command, "x");
  EXPECT_EQ(replay.unfinished[1].id, 2u);
  EXPECT_FALSE(replay.unfinished[1].running);
  EXPECT_EQ(replay.unfinished[2].id, 4u);
  EXPECT_EQ(replay.unfinished[2].group, ProcessGroup{});
  ASSERT_EQ(replay.open_runs.size(), 1u);
  EXPECT_EQ(replay.open_runs[0].pid, 10);
}

TEST(JournalReplay, AJobTakenAheadThatNeverStartedWaitsToRunAsTheQueueGaveIt) {
  auto replay = replay_journal(records({
      R"({"event":"run_start","run":"r1","pid":10})",
      R"({"event":"job_start","job":1,"run":"r1","host":"a"})",
      R"({"event":"job_taken_ahead","job":2,"run":"r1","params":{"i":"2"},"line":3,)"
      R"("template":"echo <<i>>","slots_needed":2,"timeout":"5m","retries":1})",
      R"({"event":"job_taken_ahead","job":3,"run":"r1","template":"echo 3"})",
      R"({"event":"job_taken_ahead","job":4,"run":"r1","template":"echo 4"})",
      R"({"event":"job_end","job":1,"exit":0})",
      R"({"event":"job_start","job":3,"run":"r1","host":"a","attempt":1})",
      R"({"event":"job_start","job":4,"run":"r1","host":"a","attempt":1})",
      R"({"event":"job_end","job":4,"exit":0})",
  }));
  ASSERT_EQ(replay.unfinished.size(), 2u);
  const UnfinishedJob& waiting = replay.unfinished[0];
  EXPECT_EQ(waiting.id, 2u);
  EXPECT_FALSE(waiting.running);
  EXPECT_EQ(waiting.host, "");
  EXPECT_EQ(waiting.group, ProcessGroup{});
  EXPECT_EQ(waiting.start.attempt, 0);
  EXPECT_EQ(waiting.start.template_command, "echo <<i>>");
  EXPECT_EQ(waiting.start.params, (Params{{"i", "2"}}));
  EXPECT_EQ(waiting.start.line, 3);
  EXPECT_EQ(waiting.start.slots_needed, 2);
  EXPECT_EQ(waiting.start.timeout, "5m");
  EXPECT_EQ(waiting.start.retries, 1);
  // Started once taken ahead: it may still run, as any started job.
  EXPECT_EQ(replay.unfinished[1].id, 3u);
  EXPECT_TRUE(replay.unfinished[1].running);
  EXPECT_EQ(replay.unfinished[1].host, "a");
}

TEST(JournalReplay, ARerunThatStartedAgainCountsByItsLatestStart) {
  auto replay = replay_journal(records({
      R"({"event":"run_start","run":"r1","pid":10})",
      R"({"event":"job_start","job":7,"run":"r1","host":"a"})",
      R"({"event":"job_pgid","job":7,"pgid":70})",
      R"({"event":"job_end","job":7,"lost":true,"rerun":true})",
      R"({"event":"job_start","job":7,"run":"r1","host":"b"})",
      R"({"event":"job_pgid","job":7,"pgid":71})",
  }));
  ASSERT_EQ(replay.unfinished.size(), 1u);
  EXPECT_EQ(replay.unfinished[0].host, "b");
  EXPECT_EQ(replay.unfinished[0].group.id, 71);
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST(JournalReplay, AJobThatSpansHostsKeepsEachRanksProcessGroup) {
  JournalReplay replay = replay_journal(records({
      R"({"event":"run_start","run":"r1","pid":999999999,"time":"t"})",
      R"({"event":"job_start","job":1,"host":"a","nodes":2,"tasks":[{"rank":0,"host":"a"},{"rank":1,"host":"b"}]})",
      R"({"event":"job_pgid","job":1,"pgid":100,"rank":0})",
      R"({"event":"job_pgid","job":1,"pgid":200,"rank":1,"mark":"ab-2"})",
  }));
  ASSERT_EQ(replay.unfinished.size(), 1u);
  EXPECT_EQ(replay.unfinished[0].group, ProcessGroup{100});
  EXPECT_EQ(replay.unfinished[0].rank_groups, (std::map<int, ProcessGroup>{{1, {200, "ab-2"}}}));
}

}  // namespace
}  // namespace runner
