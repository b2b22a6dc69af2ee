// The loop wakes for ready descriptors and due deadlines, and steps every
// pollable after each wake-up.
#include "runner/exec/event_loop.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace runner {
namespace {

struct Probe final : Pollable {
  std::optional<Clock::time_point> due;
  int fd = -1;
  int steps = 0;
  void poll_fds(std::vector<pollfd>& out) override {
    if (fd >= 0) out.push_back({fd, POLLIN, 0});
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
    loop.run_once(std::chrono::seconds(30));
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
  loop.run_once(std::chrono::seconds(30));
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
  loop.run_once(std::chrono::milliseconds(1));
  EXPECT_EQ(a.steps, 0);
}

}  // namespace
}  // namespace runner
