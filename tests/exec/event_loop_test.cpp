// The loop wakes for ready descriptors and due deadlines, and steps every
// pollable after each wake-up.
#include "runner/exec/event_loop.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

namespace runner {
namespace {

struct Probe final : Pollable {
  std::optional<Clock::time_point> due;
  int fd = -1;
  std::size_t ignored_fds = 0;  // entries poll skips (fd -1), which still count
  int steps = 0;
  void poll_fds(std::vector<pollfd>& out) override {
    if (fd >= 0) out.push_back({fd, POLLIN, 0});
    out.insert(out.end(), ignored_fds, pollfd{-1, 0, 0});
  }
  void step(Clock::time_point) override { ++steps; }
  std::optional<Clock::time_point> deadline() const override { return due; }
};

TEST(EventLoop, DeadlineLongPastOrAtTheBeginningOfTimeWakesAtOnce) {
  for (auto due : {Clock::time_point::min(), Clock::time_point{}, Clock::now()}) {
    EventLoop loop;
    Probe probe;
    probe.due = due;
    loop.add(&probe);
    auto before = Clock::now();
    EXPECT_TRUE(loop.run_once(std::chrono::seconds(30)).ok());
    EXPECT_EQ(probe.steps, 1);
    EXPECT_LT(Clock::now() - before, std::chrono::seconds(5)) << "waited for max_wait instead";
  }
}

TEST(EventLoop, ReadyDescriptorWakesAndEveryPollableSteps) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EventLoop loop;
  Probe reader, bystander;
  reader.fd = fds[0];
  loop.add(&reader);
  loop.add(&bystander);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  EXPECT_TRUE(loop.run_once(std::chrono::seconds(30)).ok());
  EXPECT_EQ(reader.steps, 1);
  EXPECT_EQ(bystander.steps, 1);
  close(fds[0]);
  close(fds[1]);
}

TEST(EventLoop, RemovedPollableIsNotStepped) {
  EventLoop loop;
  Probe a;
  a.due = Clock::now();
  loop.add(&a);
  loop.remove(&a);
  EXPECT_TRUE(loop.run_once(std::chrono::milliseconds(1)).ok());
  EXPECT_EQ(a.steps, 0);
}

TEST(EventLoop, APollThatFailsIsAnErrorAndStepsNothing) {
  // More entries than the process may have descriptors: poll refuses them.
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  rlimit low = before;
  low.rlim_cur = 8;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  EventLoop loop;
  Probe crowd;
  crowd.ignored_fds = 16;
  crowd.due = Clock::now();
  loop.add(&crowd);
  Status polled = loop.run_once(std::chrono::milliseconds(1));
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &before), 0);
  EXPECT_EQ(polled.message(), "poll: Invalid argument");
  EXPECT_EQ(crowd.steps, 0);
}

}  // namespace
}  // namespace runner
