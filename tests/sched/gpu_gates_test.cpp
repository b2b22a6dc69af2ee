// The GPU gates of `gpu_free` slots on their own: shut until a fresh look
// found the GPU free, looked at on ready hosts while work waits and again
// while busy, each change said once, a GPU this run holds through another
// slot kept shut, looks given up at their limit, and a host that cannot be
// looked at left unchecked, with a warning.
#include "runner/sched/gpu_gates.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::make_fleet;
using testing::RecordingObserver;
using testing::usage;
using namespace std::chrono_literals;

const Clock::time_point t0 = Clock::time_point{} + 1h;

// Every slot of `fleet` waits for its GPU to run no compute process.
Fleet gated(Fleet fleet) {
  for (Slot& slot : fleet.slots) slot.gpu_free = *parse_gpu_free("no-processes");
  return fleet;
}

// A fleet of ready hosts with its slot book and its gates, which say what
// changes to `observer`.
struct Gates {
  explicit Gates(Fleet of, Mode mode = Mode::queue)
      : fleet(std::move(of)),
        slots(fleet),
        hosts(fleet.hosts.size(), Backoff{1s, 1s}),
        options{.mode = mode, .gpu_check_limit = 30s},
        gates(fleet, slots, hosts, options, observer) {
    for (std::size_t h = 0; h < hosts.size(); ++h) hosts[h].state = HostState::ready;
  }
  // A look at `host` begun at `at` answers `answer`.
  bool look(int host, const GpuLookAnswer& answer, Clock::time_point at) {
    std::vector<GpuLook> looks = gates.begin_due_looks(true, at);
    bool begun = std::any_of(looks.begin(), looks.end(),
                             [&](const GpuLook& look) { return look.host == host; });
    EXPECT_TRUE(begun) << "no look at host " << host << " was due";
    return gates.looked(host, answer, at);
  }
  // What the gates said since the last call.
  std::vector<std::string> said() { return std::exchange(observer.notices, {}); }

  Fleet fleet;
  SlotBook slots;
  HostTable hosts;
  SchedulerOptions options;
  RecordingObserver observer;
  GpuGates gates;
};

const GpuLookAnswer idle = usage({{0, 0}, {0, 0}});
const GpuLookAnswer busy = usage({{900, 1}, {0, 0}});

TEST(GpuGates, ASlotWithoutGpuFreeIsAlwaysOpen) {
  Gates g(make_fleet({{"a", {"0"}}}));
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_FALSE(g.gates.waiting(0, t0));
  EXPECT_TRUE(g.gates.begin_due_looks(true, t0).empty());
}

TEST(GpuGates, BroadcastModeOpensEveryGate) {
  Gates g(gated(make_fleet({{"a", {"0"}}})), Mode::broadcast);
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_TRUE(g.gates.begin_due_looks(true, t0).empty());
}

TEST(GpuGates, AGatedSlotIsShutAndDueAtOnceUntilALookFindsItsGpuFree) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  EXPECT_FALSE(g.gates.open(0, t0));
  EXPECT_TRUE(g.gates.waiting(0, t0));
  EXPECT_EQ(g.gates.due(0), Clock::time_point::min());

  std::vector<GpuLook> looks = g.gates.begin_due_looks(true, t0);
  ASSERT_EQ(looks.size(), 1u);
  EXPECT_EQ(looks[0].host, 0);
  EXPECT_TRUE(g.gates.looked(0, idle, t0));
  EXPECT_TRUE(g.said().empty());  // free from the start: nothing to say
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.waiting(0, t0));
}

TEST(GpuGates, LooksBeginOnlyOnReadyHostsWhileWanted) {
  Gates g(gated(make_fleet({{"a", {"0"}}, {"b", {"0"}}})));
  EXPECT_TRUE(g.gates.begin_due_looks(false, t0).empty()) << "no work waits";
  EXPECT_FALSE(g.gates.next_due(false));
  g.hosts[0].state = HostState::reconnecting;
  std::vector<GpuLook> looks = g.gates.begin_due_looks(true, t0);
  ASSERT_EQ(looks.size(), 1u);
  EXPECT_EQ(looks[0].host, 1);
}

TEST(GpuGates, ALookIsFreshForTwoSeconds) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  g.look(0, idle, t0);
  EXPECT_TRUE(g.gates.open(0, t0 + 2s));
  EXPECT_FALSE(g.gates.open(0, t0 + 3s));
  EXPECT_EQ(g.gates.due(0), t0 + 2s);
  EXPECT_EQ(g.gates.next_due(true), t0 + 2s);
}

TEST(GpuGates, ABusyGpuIsSaidOnceLookedAtAgainLaterAndSaidFreeAgain) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  g.look(0, busy, t0);
  std::vector<std::string> said = g.said();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0],
            "a gpu=0: its GPU is not free (1 process; gpu_free: no-processes); "
            "jobs wait for it");
  EXPECT_FALSE(g.gates.open(0, t0));
  EXPECT_EQ(g.gates.due(0), t0 + 5s);
  EXPECT_TRUE(g.gates.begin_due_looks(true, t0 + 4s).empty());

  g.look(0, busy, t0 + 5s);
  EXPECT_TRUE(g.said().empty());  // as busy as before
  g.look(0, idle, t0 + 10s);
  said = g.said();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0], "a gpu=0: its GPU is free again");
  EXPECT_TRUE(g.gates.open(0, t0 + 10s));
}

TEST(GpuGates, AGpuThatNvidiaSmiDoesNotListIsBusy) {
  Gates g(gated(make_fleet({{"a", {"7"}}})));
  g.look(0, idle, t0);
  std::vector<std::string> said = g.said();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("nvidia-smi does not list GPU 7"), std::string::npos) << said[0];
  EXPECT_FALSE(g.gates.open(0, t0));
}

TEST(GpuGates, AGpuThisRunHoldsThroughAnotherSlotStaysShutAndIsNotLookedAt) {
  Gates g(gated(make_fleet({{"a", {"0", "0"}}})));
  g.slots.hold(std::vector<int>{0}, 7);
  EXPECT_FALSE(g.gates.open(1, t0));
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_TRUE(g.gates.begin_due_looks(true, t0).empty());
}

TEST(GpuGates, ALookUnderWayIsNotDueAgainAndIsGivenUpAtItsLimit) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  ASSERT_EQ(g.gates.begin_due_looks(true, t0).size(), 1u);
  g.gates.look_runs_as(0, 42);
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_TRUE(g.gates.begin_due_looks(true, t0 + 1s).empty());
  EXPECT_EQ(g.gates.next_due(true), t0 + 30s);
  EXPECT_TRUE(g.gates.give_up_overdue(t0 + 29s).empty());

  std::vector<GpuLookGivenUp> given_up = g.gates.give_up_overdue(t0 + 30s);
  ASSERT_EQ(given_up.size(), 1u);
  EXPECT_EQ(given_up[0].host, 0);
  EXPECT_EQ(given_up[0].command, TaskId{42});
  std::vector<std::string> said = g.said();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0],
            "a: cannot tell whether its GPUs are free for `gpu_free` (nvidia-smi did not answer "
            "within 30.0s); its jobs start without waiting");
  EXPECT_FALSE(g.gates.next_due(true));
  EXPECT_FALSE(g.gates.looked(0, idle, t0 + 31s))
      << "its late answer is not looked at";
  EXPECT_TRUE(g.gates.open(0, t0 + 31s)) << "unchecked from now on";
}

TEST(GpuGates, ALookThatEndsAtOnceKeepsNoCommand) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  ASSERT_EQ(g.gates.begin_due_looks(true, t0).size(), 1u);
  EXPECT_TRUE(g.gates.looked(0, busy, t0));
  g.gates.look_runs_as(0, 42);
  EXPECT_TRUE(g.gates.give_up_overdue(t0 + 30s).empty());
  EXPECT_EQ(g.gates.due(0), t0 + 5s);
}

TEST(GpuGates, AHostWhoseNvidiaSmiFailsTakesJobsUncheckedButNotOnAGpuThisRunHolds) {
  Gates g(gated(make_fleet({{"a", {"0", "0"}}, {"b", {"0"}}})));
  ASSERT_EQ(g.gates.begin_due_looks(true, t0).size(), 2u);
  EXPECT_TRUE(g.gates.looked(0, GpuLookAnswer{std::nullopt, JobExit::exited(127), "sh: nvidia-smi: not found"}, t0));
  std::vector<std::string> said = g.said();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0],
            "a: cannot tell whether its GPUs are free for `gpu_free` (nvidia-smi: exit 127, sh: "
            "nvidia-smi: not found); its jobs start without waiting");
  EXPECT_TRUE(g.gates.open(0, t0));
  EXPECT_FALSE(g.gates.due(0));
  EXPECT_FALSE(g.gates.open(2, t0));  // the other host's slot is still gated

  g.slots.hold(std::vector<int>{0}, 7);
  EXPECT_FALSE(g.gates.open(1, t0)) << "unchecked, but still held by this run's job";
}

TEST(GpuGates, ALookLostWithItsHostSaysNothingAndKeepsItsGate) {
  Gates g(gated(make_fleet({{"a", {"0"}}})));
  ASSERT_EQ(g.gates.begin_due_looks(true, t0).size(), 1u);
  EXPECT_TRUE(g.gates.looked(0, GpuLookAnswer{std::nullopt, JobExit::lost_because("connection lost"), ""}, t0));
  EXPECT_TRUE(g.said().empty());
  EXPECT_FALSE(g.gates.open(0, t0));
  EXPECT_EQ(g.gates.due(0), Clock::time_point::min());
}

}  // namespace
}  // namespace runner
