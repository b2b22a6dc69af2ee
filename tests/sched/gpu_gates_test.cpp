// The GPU gates of `gpu_free` slots on their own: shut until a fresh look
// found the GPU free, looked at again while busy, each change said once, a
// GPU this run holds through another slot kept shut, looks given up at
// their limit, and a host that cannot be looked at left unchecked.
#include "runner/sched/gpu_gates.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::make_fleet;
using namespace std::chrono_literals;

const Clock::time_point t0 = Clock::time_point{} + 1h;

// Every slot of `fleet` waits for its GPU to run no compute process.
Fleet gated(Fleet fleet) {
  for (Slot& slot : fleet.slots) slot.gpu_free = *parse_gpu_free("no-processes");
  return fleet;
}

// A fleet with its slot book and its gates.
struct Gates {
  explicit Gates(Fleet of, Mode mode = Mode::queue)
      : fleet(std::move(of)), slots(fleet), gates(fleet, slots, mode) {}
  Fleet fleet;
  SlotBook slots;
  GpuGates gates;
};

const std::map<std::string, GpuUsage> idle = {{"0", {0, 0}}, {"1", {0, 0}}};
const std::map<std::string, GpuUsage> busy = {{"0", {900, 1}}, {"1", {0, 0}}};

TEST(GpuGates, ASlotWithoutGpuFreeIsAlwaysOpen) {
  Gates g(make_fleet({{"a", {"0"}}}));
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_FALSE(g.gates.waiting(0, t0));
}

TEST(GpuGates, BroadcastModeOpensEveryGate) {
  Gates g(gated(make_fleet({{"a", {"0"}}})), Mode::broadcast);
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.due(0));
}

TEST(GpuGates, AGatedSlotIsShutAndDueAtOnceUntilALookFindsItsGpuFree) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  EXPECT_FALSE(g.gates.open(0, t0));
  EXPECT_TRUE(g.gates.waiting(0, t0));
  EXPECT_EQ(g.gates.due(0), Clock::time_point::min());

  EXPECT_TRUE(g.gates.record(0, idle, t0).empty());  // free from the start: nothing to say
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.waiting(0, t0));
}

TEST(GpuGates, ALookIsFreshForTwoSeconds) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  (void)g.gates.record(0, idle, t0);
  EXPECT_TRUE(g.gates.open(0, t0 + 2s));
  EXPECT_FALSE(g.gates.open(0, t0 + 3s));
  EXPECT_EQ(g.gates.due(0), t0 + 2s);
}

TEST(GpuGates, ABusyGpuIsSaidOnceLookedAtAgainLaterAndSaidFreeAgain) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  std::vector<std::string> said = g.gates.record(0, busy, t0);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0],
            "a gpu=0: its GPU is not free (1 process; gpu_free: no-processes); "
            "jobs wait for it");
  EXPECT_FALSE(g.gates.open(0, t0));
  EXPECT_EQ(g.gates.due(0), t0 + 5s);

  EXPECT_TRUE(g.gates.record(0, busy, t0 + 5s).empty());  // as busy as before
  said = g.gates.record(0, idle, t0 + 10s);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], "a gpu=0: its GPU is free again");
  EXPECT_TRUE(g.gates.open(0, t0 + 10s));
}

TEST(GpuGates, AGpuThatNvidiaSmiDoesNotListIsBusy) {
  Gates g(gated(make_fleet({{"a", {"7"}}})));
  std::vector<std::string> said = g.gates.record(0, idle, t0);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("nvidia-smi does not list GPU 7"), std::string::npos) << said[0];
  EXPECT_FALSE(g.gates.open(0, t0));
}

TEST(GpuGates, AGpuThisRunHoldsThroughAnotherSlotStaysShutAndIsNotLookedAt) {
  Gates g(gated(make_fleet({{"a", {"0", "0"}}})));
  g.slots.hold(std::vector<int>{0}, 7);
  (void)g.gates.record(0, idle, t0);
  EXPECT_FALSE(g.gates.open(1, t0));
  EXPECT_FALSE(g.gates.due(0));

  g.gates.broke(0);  // unchecked, but still held by this run's job
  EXPECT_FALSE(g.gates.open(1, t0));
}

TEST(GpuGates, ALookUnderWayIsNotDueAgainAndIsGivenUpAtItsLimit) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  g.gates.look_begins(0, t0 + 30s);
  g.gates.look_runs_as(0, 42);
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_EQ(g.gates.give_up_at(0), t0 + 30s);
  EXPECT_FALSE(g.gates.give_up_if_overdue(0, t0 + 29s));
  EXPECT_EQ(g.gates.give_up_if_overdue(0, t0 + 30s), TaskId{42});
  EXPECT_FALSE(g.gates.give_up_at(0));
  EXPECT_FALSE(g.gates.look_ends(0));  // its late answer is not looked at
}

TEST(GpuGates, ALookThatEndsAtOnceKeepsNoCommand) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  g.gates.look_begins(0, t0 + 30s);
  EXPECT_TRUE(g.gates.look_ends(0));
  g.gates.look_runs_as(0, 42);
  EXPECT_FALSE(g.gates.give_up_at(0));
  EXPECT_EQ(g.gates.due(0), Clock::time_point::min());
}

TEST(GpuGates, AHostThatCannotBeLookedAtTakesJobsUnchecked) {
  Gates g(gated(make_fleet({{"a", {"0"}}, {"b", {"0"}}})));
  g.gates.broke(0);
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_FALSE(g.gates.open(1, t0));  // the other host's slot is still gated
}

}  // namespace
}  // namespace runner
