// A connection's ChannelPool without a server: the order work is opened
// in, what counts as load, sshd's limit and the pause after a refusal, and
// what is given back, lost or never started.
#include "../../src/exec/ssh/ssh_channel_pool.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace runner::ssh {
namespace {

using namespace std::chrono_literals;

const Clock::time_point k_start = Clock::time_point{} + 1h;

ChannelWork job(TaskId id) {
  ChannelWork work;
  work.job = id;
  return work;
}

ChannelWork signal_for(TaskId id) {
  ChannelWork work = job(id);
  work.kind = ChannelWork::Kind::signal;
  return work;
}

// Opens every channel it can at `now` and says which work each carries.
std::vector<TaskId> open_all(ChannelPool& pool, Clock::time_point now) {
  std::vector<TaskId> opened;
  bool gave_back = false;
  while (SshChannel* channel = pool.open_next(now, true, gave_back)) {
    opened.push_back(channel->work.job);
    pool.opened();
  }
  return opened;
}

// An open launcher between jobs; `retired`: it ends because a job left
// processes behind on it.
void add_idle_launcher(ChannelPool& pool, bool retired) {
  auto channel = std::make_unique<SshChannel>();
  channel->work.kind = ChannelWork::Kind::pump;
  channel->exec().launcher = true;
  channel->step = retired ? SshChannel::Step::send_eof : SshChannel::Step::run;
  pool.channels().push_back(std::move(channel));
}

TEST(ChannelPoolTest, SignalsOpenBeforeJobsInTheOrderTheyCame) {
  ChannelPool pool(std::nullopt);
  pool.add(job(1));
  pool.add(signal_for(2));
  pool.add(job(3));
  pool.add(signal_for(4));
  EXPECT_EQ(open_all(pool, k_start), (std::vector<TaskId>{2, 4, 1, 3}));
}

TEST(ChannelPoolTest, AnIdleLauncherIsRoomAndARetiredOneIsLoad) {
  ChannelPool pool(2);
  add_idle_launcher(pool, false);
  EXPECT_EQ(pool.load(), 0);
  EXPECT_TRUE(pool.accepts_work(k_start));
  add_idle_launcher(pool, true);
  pool.add(job(1));
  EXPECT_EQ(pool.load(), 2);
  EXPECT_FALSE(pool.accepts_work(k_start));
}

TEST(ChannelPoolTest, AtTheLimitWorkIsGivenBackOnlyWhileRetiredLaunchersHoldSessions) {
  ChannelPool pool(1);
  add_idle_launcher(pool, false);
  pool.add(job(1));
  bool gave_back = false;
  EXPECT_EQ(pool.open_next(k_start, true, gave_back), nullptr);
  EXPECT_FALSE(gave_back);
  EXPECT_TRUE(pool.take_returned().empty());

  pool.channels().front()->step = SshChannel::Step::send_eof;
  EXPECT_EQ(pool.open_next(k_start, true, gave_back), nullptr);
  EXPECT_TRUE(gave_back);
  std::vector<ChannelWork> returned = pool.take_returned();
  ASSERT_EQ(returned.size(), 1u);
  EXPECT_EQ(returned[0].job, 1u);
}

TEST(ChannelPoolTest, ARefusalRightAfterACloseWaitsAMomentBeforeTheNextOpen) {
  ChannelPool pool(std::nullopt);
  pool.closed(k_start);
  EXPECT_TRUE(pool.settling(k_start + 100ms));
  EXPECT_FALSE(pool.settling(k_start + 300ms));

  ChannelWork refused = job(1);
  pool.retry_shortly(k_start + 100ms, &refused);
  EXPECT_EQ(pool.reopen_at(k_start + 100ms), k_start + 120ms);
  EXPECT_TRUE(open_all(pool, k_start + 110ms).empty());
  EXPECT_EQ(open_all(pool, k_start + 120ms), (std::vector<TaskId>{1}));
}

TEST(ChannelPoolTest, TheLimitLearntIsTheLowestRefusal) {
  ChannelPool pool(std::nullopt);
  EXPECT_EQ(pool.learn_limit(3), 3);
  EXPECT_EQ(pool.learn_limit(5), 3);
  EXPECT_EQ(pool.learn_limit(2), 2);
}

TEST(ChannelPoolTest, ALostConnectionTellsJobsThatMayHaveRunFromWorkThatNeverStarted) {
  ChannelPool pool(std::nullopt);
  pool.add(job(1));
  pool.add(job(2));
  open_all(pool, k_start);
  pool.channels()[0]->exec_attempted = true;
  pool.add(job(3));
  pool.lose_channels();
  pool.keep_unstarted();
  EXPECT_EQ(pool.lost_jobs(), (std::vector<TaskId>{1}));
  std::vector<ChannelWork> unstarted = pool.take_unstarted();
  ASSERT_EQ(unstarted.size(), 2u);
  EXPECT_EQ(unstarted[0].job, 2u);
  EXPECT_EQ(unstarted[1].job, 3u);
}

}  // namespace
}  // namespace runner::ssh
