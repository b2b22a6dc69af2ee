// A broadcast step on its own: a failed job marks the step until the next
// begins; a step's push sends its files to every ready host, says what each
// answered, and hands the step back once all answered, its commands left
// only on the hosts that got the files and are still ready, with a failure
// for each host that did not get them.
#include "runner/sched/broadcast_steps.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "sched/fakes.h"
#include "support/no_executor_events.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::FakeHostOps;
using testing::make_fleet;
using testing::RecordingObserver;

// Ready hosts a (slots 0 and 1), b (slot 2) and c (slot 3), each with a fake
// executor and its host operations, and the steps, which hand a pushed
// step to `handed`.
struct Pushes {
  Fleet fleet = make_fleet({{"a", {"0", "1"}}, {"b", {"0"}}, {"c", {"0"}}});
  HostTable hosts{fleet.hosts.size(), Backoff{}};
  testing::NoExecutorEvents events;  // the pushes read the host table instead
  std::vector<std::unique_ptr<FakeExecutor>> executors;
  std::vector<std::unique_ptr<HostOps>> host_ops;
  RecordingObserver observer;
  std::vector<BroadcastSteps::Pushed> handed;
  BroadcastSteps steps{fleet, hosts, host_ops, observer, [this](BroadcastSteps::Pushed pushed) {
                         handed.push_back(std::move(pushed));
                       }};
  testing::TempDir local;
  Clock::time_point now{};

  Pushes() {
    for (std::size_t h = 0; h < fleet.hosts.size(); ++h) {
      hosts[h].state = HostState::ready;
      executors.push_back(std::make_unique<FakeExecutor>(static_cast<int>(h), events));
      host_ops.push_back(std::make_unique<FakeHostOps>(*executors.back()));
      ops(static_cast<int>(h)).put = PutResult{.sent = 1, .bytes = 1};
    }
  }
  FakeHostOps& ops(int host) { return static_cast<FakeHostOps&>(*host_ops[host]); }
  // Host `host` answers the push only after `steps` steps.
  void slow(int host, int steps) {
    executors[host]->outcome = [steps](const std::string&) {
      return FakeExecutor::Outcome{.steps = steps};
    };
  }
  // Queue line 1's step, its command on every slot, pushing data/x.bin into `in`.
  BroadcastStep step() {
    BroadcastStep step;
    step.spec.command = "train";
    step.spec.line = 1;
    step.spec.push = local.write("data/x.bin", "x");
    step.spec.push_to = "in";
    for (int slot = 0; slot < static_cast<int>(fleet.slots.size()); ++slot)
      step.commands.emplace_back(slot, "train on " + fleet.slots[slot].label);
    return step;
  }
  void tick() {
    now += std::chrono::milliseconds(10);
    for (auto& executor : executors) executor->step(now);
  }
  std::vector<int> slots_handed() const {
    std::vector<int> slots;
    for (const auto& [slot, command] : handed.at(0).step.commands) slots.push_back(slot);
    return slots;
  }
  bool said(const std::string& notice) const {
    return std::find(observer.notices.begin(), observer.notices.end(), notice) !=
           observer.notices.end();
  }
};

TEST(BroadcastSteps, AFailedJobMarksTheStepUntilTheNextBegins) {
  Pushes p;
  EXPECT_FALSE(p.steps.failed());
  p.steps.job_failed();
  EXPECT_TRUE(p.steps.failed());
  p.steps.begin();
  EXPECT_FALSE(p.steps.failed());
}

TEST(BroadcastSteps, APushHoldsTheStepUntilEveryHostAnsweredThenRunsItOnEverySlot) {
  Pushes p;
  p.slow(2, 3);
  p.steps.push(p.step());
  EXPECT_TRUE(p.said("queue line 1: pushing 1 file to 3 hosts into in"));
  for (int host = 0; host < 3; ++host)
    EXPECT_EQ(p.ops(host).puts, std::vector<std::string>{"in"}) << host;
  EXPECT_TRUE(p.steps.pushing());
  p.tick();
  EXPECT_TRUE(p.said("push to a: " + put_summary(p.ops(0).put)));
  EXPECT_TRUE(p.handed.empty()) << "host c has yet to answer";
  EXPECT_TRUE(p.steps.pushing());
  for (int i = 0; i < 3; ++i) p.tick();
  ASSERT_EQ(p.handed.size(), 1u);
  EXPECT_FALSE(p.steps.pushing());
  EXPECT_EQ(p.handed[0].failures, 0);
  EXPECT_EQ(p.handed[0].step.spec.command, "train");
  EXPECT_EQ(p.slots_handed(), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(p.steps.failed());
}

TEST(BroadcastSteps, AHostThatFailsThePushLosesItsSlotsCommandsAndIsOneFailure) {
  Pushes p;
  p.ops(0).put.error = "no space left on the device";
  p.steps.push(p.step());
  p.tick();
  EXPECT_TRUE(p.said("push to a failed: no space left on the device"));
  ASSERT_EQ(p.handed.size(), 1u);
  EXPECT_EQ(p.handed[0].failures, 1);
  EXPECT_EQ(p.slots_handed(), (std::vector<int>{2, 3}));
  EXPECT_TRUE(p.steps.failed());
}

TEST(BroadcastSteps, AHostLostWhilePushingRunsNothingAndIsOneFailure) {
  Pushes p;
  p.slow(1, 3);
  p.steps.push(p.step());
  p.executors[1]->drop();
  p.hosts[1].state = HostState::reconnecting;
  p.tick();
  EXPECT_TRUE(p.said("push to b failed: connection lost"));
  ASSERT_EQ(p.handed.size(), 1u);
  EXPECT_EQ(p.handed[0].failures, 1);
  EXPECT_EQ(p.slots_handed(), (std::vector<int>{0, 1, 3}));
  EXPECT_TRUE(p.steps.failed());
}

TEST(BroadcastSteps, AHostLostAfterItGotTheFilesRunsNothingButIsNoFailureOfThePush) {
  Pushes p;
  p.slow(2, 3);
  p.steps.push(p.step());
  p.tick();
  EXPECT_TRUE(p.said("push to b: " + put_summary(p.ops(1).put)));
  p.hosts[1].state = HostState::reconnecting;
  for (int i = 0; i < 3; ++i) p.tick();
  ASSERT_EQ(p.handed.size(), 1u);
  EXPECT_EQ(p.handed[0].failures, 0);
  EXPECT_EQ(p.slots_handed(), (std::vector<int>{0, 1, 3}));
  EXPECT_FALSE(p.steps.failed());
}

TEST(BroadcastSteps, OnlyReadyHostsAreSentTheFiles) {
  Pushes p;
  p.hosts[2].state = HostState::connecting;
  p.steps.push(p.step());
  EXPECT_TRUE(p.said("queue line 1: pushing 1 file to 2 hosts into in"));
  EXPECT_TRUE(p.ops(2).puts.empty());
  p.tick();
  ASSERT_EQ(p.handed.size(), 1u);
  EXPECT_EQ(p.handed[0].failures, 0);
  EXPECT_EQ(p.slots_handed(), (std::vector<int>{0, 1, 2}));
}

TEST(BroadcastSteps, FilesThatCannotBeReadFailTheStepAtOnceAndAreSentNowhere) {
  Pushes p;
  BroadcastStep step = p.step();
  step.spec.push = p.local.file("missing");
  p.steps.push(std::move(step));
  ASSERT_EQ(p.handed.size(), 1u);
  EXPECT_EQ(p.handed[0].failures, 1);
  EXPECT_TRUE(p.handed[0].step.commands.empty());
  EXPECT_TRUE(p.steps.failed());
  EXPECT_FALSE(p.steps.pushing());
  for (int host = 0; host < 3; ++host) EXPECT_TRUE(p.ops(host).puts.empty()) << host;
  ASSERT_EQ(p.observer.notices.size(), 1u);
  EXPECT_EQ(p.observer.notices[0].rfind("queue line 1: push: ", 0), 0u) << p.observer.notices[0];
}

TEST(BroadcastSteps, StoppingStopsTheCopiesOnlyWhileAPushIsUnderWay) {
  Pushes p;
  p.steps.stop_pushing();
  EXPECT_EQ(p.ops(0).transfer_stops, 0);
  p.steps.push(p.step());
  p.steps.stop_pushing();
  for (int host = 0; host < 3; ++host) EXPECT_EQ(p.ops(host).transfer_stops, 1) << host;
}

}  // namespace
}  // namespace runner
