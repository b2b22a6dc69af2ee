// A gang job's rank logs read as one: each line with its rank and host,
// rank after rank, and later what each log gains.
#include "runner/report/rank_logs.h"

#include <gtest/gtest.h>

#include "gang_journal.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::TempDir;

struct RankLogsTest : ::testing::Test {
  TempDir dir;
  std::string state = dir.file("q.runner");
  Campaign campaign = campaign_from_records(testing::journal_records(testing::k_gang_journal),
                                            [](long) { return true; });
  std::string shown;
  TextSink out = [this](std::string_view text) {
    shown += text;
    return true;
  };
};

TEST_F(RankLogsTest, PrefixesEveryLineWithItsRankAndHost) {
  dir.write("q.runner/logs/1.0.log", "loading\nepoch 1\n");
  dir.write("q.runner/logs/1.1.log", "loading\nCUDA error\nno newline");
  RankLogs logs(state, *campaign.find_job(1));
  ASSERT_TRUE(logs.copy_new(out, true));
  EXPECT_EQ(shown,
            "[rank 0 node01] loading\n[rank 0 node01] epoch 1\n"
            "[rank 1 node02] loading\n[rank 1 node02] CUDA error\n[rank 1 node02] no newline\n");
}

TEST_F(RankLogsTest, FollowsWhatEachLogGainsAndHoldsUnendedLines) {
  dir.write("q.runner/logs/3.0.log", "start\nhalf");
  RankLogs logs(state, *campaign.find_job(3));
  ASSERT_TRUE(logs.copy_new(out, false));
  EXPECT_EQ(shown, "[rank 0 node02] start\n");
  dir.write("q.runner/logs/3.0.log", "start\nhalf a line\n");
  dir.write("q.runner/logs/3.1.log", "rank 1 done\n");
  ASSERT_TRUE(logs.copy_new(out, false));
  EXPECT_EQ(shown,
            "[rank 0 node02] start\n[rank 0 node02] half a line\n[rank 1 node01] rank 1 done\n");
}

}  // namespace
}  // namespace runner
