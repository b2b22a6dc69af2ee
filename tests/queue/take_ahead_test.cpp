// Tests for taking ahead on a long queue: how many jobs a take removes, and
// QueueFile's take of a queue past the threshold (the jobs after those
// placed, plain ones only, out of the file and into consumed.yaml).
#include "runner/queue/take_ahead.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "runner/queue/queue_file.h"
#include "support/job_text.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::describe;

TEST(TakeAheadTest, AShortQueueTakesOnlyWhatItPlaces) {
  EXPECT_EQ(jobs_per_take(0), 1u);
  EXPECT_EQ(jobs_per_take(126'000), 1u);
  EXPECT_EQ(jobs_per_take(k_take_ahead_threshold - 1), 1u);
}

TEST(TakeAheadTest, ALongQueueTakesAJobPerSixtyFourKibibytes) {
  EXPECT_EQ(jobs_per_take(k_take_ahead_threshold), 4u);
  EXPECT_EQ(jobs_per_take(k_take_ahead_threshold + 1), 5u);
  EXPECT_EQ(jobs_per_take(5 * 64 * 1024), 5u);
  EXPECT_EQ(jobs_per_take(12'600'000), 193u);
}

// `entries` one-job entries of 64 bytes each ("- echo job00000 xxx...").
std::string one_job_entries(int entries, int from = 0) {
  std::string text;
  for (int i = from; i < from + entries; ++i) {
    char line[80];
    std::snprintf(line, sizeof line, "- echo job%05d %s\n", i, std::string(46, 'x').c_str());
    text += line;
  }
  return text;
}

bool always(const JobSpec&) { return true; }

// Places `room` jobs.
std::function<bool(const JobSpec&)> room_for(int room) {
  return [room](const JobSpec&) mutable { return room-- > 0; };
}

TEST(QueueFileTakeAheadTest, ALongQueueGivesTheJobsAfterThosePlacedUpToOnePerSixtyFourKibibytes) {
  testing::TempDir dir;
  std::string text = one_job_entries(5000);  // 320,000 bytes: 5 jobs per take
  ASSERT_EQ(jobs_per_take(text.size()), 5u);
  QueueFile queue(dir.write("queue.yaml", text));
  TakeBatch batch = queue.take_while(room_for(2), always);
  ASSERT_EQ(batch.taken.size(), 2u);
  ASSERT_EQ(batch.taken_ahead.size(), 3u);
  EXPECT_EQ(describe(batch.taken[1]), "echo job00001 " + std::string(46, 'x'));
  EXPECT_EQ(describe(batch.taken_ahead[0]), "echo job00002 " + std::string(46, 'x'));
  EXPECT_EQ(describe(batch.taken_ahead[2]), "echo job00004 " + std::string(46, 'x'));
  EXPECT_EQ(dir.read("queue.yaml"), one_job_entries(4995, 5));
  EXPECT_EQ(YAML::LoadFile(dir.file("consumed.yaml")).size(), 5u);
}

TEST(QueueFileTakeAheadTest, AShortQueueOrNoSayTakesNothingAhead) {
  testing::TempDir dir;
  QueueFile queue(dir.write("queue.yaml", one_job_entries(100)));
  TakeBatch batch = queue.take_while(room_for(1), always);
  EXPECT_EQ(batch.taken.size(), 1u);
  EXPECT_TRUE(batch.taken_ahead.empty());

  QueueFile long_queue(dir.write("long.yaml", one_job_entries(5000)));
  batch = long_queue.take_while(room_for(1));
  EXPECT_EQ(batch.taken.size(), 1u);
  EXPECT_TRUE(batch.taken_ahead.empty());
  batch = long_queue.take_while(room_for(1), [](const JobSpec&) { return false; });
  EXPECT_TRUE(batch.taken_ahead.empty());
  // Nothing placed: nothing rewritten, nothing taken ahead.
  batch = long_queue.take_while(room_for(0), always);
  EXPECT_TRUE(batch.taken.empty());
  EXPECT_TRUE(batch.taken_ahead.empty());
}

TEST(QueueFileTakeAheadTest, TakingAheadStopsAtAServiceAnEveryHostJobOrAPush) {
  for (std::string stop : {"- command: serve\n  service: true\n",
                           "- command: setup\n  every: host\n", "- push: data\n"}) {
    testing::TempDir dir;
    QueueFile queue(dir.write("queue.yaml", one_job_entries(3) + stop + one_job_entries(5000, 3)));
    TakeBatch batch = queue.take_while(room_for(1), always);
    EXPECT_EQ(batch.taken.size(), 1u) << stop;
    EXPECT_EQ(batch.taken_ahead.size(), 2u) << stop;
    EXPECT_TRUE(dir.read("queue.yaml").starts_with(stop)) << stop;
  }
}

TEST(QueueFileTakeAheadTest, AProductEntryIsTakenAheadJobByJob) {
  testing::TempDir dir;
  QueueFile queue(dir.write(
      "queue.yaml", "- command: run <<i>>\n  i: [1, 2, 3, 4, 5, 6, 7]\n" + one_job_entries(5000)));
  TakeBatch batch = queue.take_while(room_for(1), always);
  ASSERT_EQ(batch.taken.size(), 1u);
  ASSERT_EQ(batch.taken_ahead.size(), 4u);
  EXPECT_EQ(describe(batch.taken_ahead[3]), "run <<i>> i=5");
  EXPECT_TRUE(dir.read("queue.yaml").starts_with("- command: run <<i>>\n  i: [6, 7]\n"));
}

}  // namespace
}  // namespace runner
