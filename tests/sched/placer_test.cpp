// Where a job goes, against the scheduler's components without a run: free
// slots of one ready host, N hosts for `nodes: N`, each host for `every:
// host`, and what it says when the queue's head fits nowhere.
#include "runner/sched/placer.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::make_fleet;
using namespace std::chrono_literals;

const Clock::time_point t0 = Clock::time_point{} + 1h;

// A fleet with every host ready and every slot free.
struct Components {
  explicit Components(Fleet of)
      : fleet(std::move(of)),
        hosts(fleet.hosts.size(), Backoff{}),
        slots(fleet),
        gates(fleet, slots, hosts, options, observer),
        services(fleet, running, run_log, observer) {
    for (std::size_t h = 0; h < hosts.size(); ++h) hosts[h].state = HostState::ready;
  }
  Placer placer() const { return Placer(fleet, hosts, slots, gates, services, t0); }

  Fleet fleet;
  HostTable hosts;
  SlotBook slots;
  SchedulerOptions options;
  testing::RecordingObserver observer;
  testing::FakeRunLog run_log{observer.events};
  RunningJobs running;
  GpuGates gates;
  Services services;
};

JobSpec job_of(int slots, std::optional<int> nodes = std::nullopt) {
  JobSpec spec;
  spec.command = "train";
  spec.slots = slots;
  spec.line = 3;
  spec.nodes = nodes;
  return spec;
}

TEST(Placer, AJobTakesFreeSlotsOfOneReadyHost) {
  Components c(make_fleet({{"a", {"0"}}, {"b", {"0", "1"}}}));
  c.hosts[0].state = HostState::reconnecting;
  std::optional<Placement> placement = c.placer().place(job_of(1));
  ASSERT_TRUE(placement);
  EXPECT_EQ(*placement, (Placement{{1}}));
  EXPECT_FALSE(c.placer().place(job_of(3)));
}

TEST(Placer, ASlotToAvoidIsTakenOnlyWhenNoOtherFits) {
  Components c(make_fleet({{"a", {"0", "1"}}}));
  EXPECT_EQ(c.placer().place(job_of(1), 0), (Placement{{1}}));
  c.slots.hold(std::vector<int>{1}, 7);
  EXPECT_EQ(c.placer().place(job_of(1), 0), (Placement{{0}}));
}

TEST(Placer, AJobOfNodesTakesSlotsOnThatManyDifferentHostsOrNothing) {
  Components c(make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}}));
  EXPECT_EQ(c.placer().place(job_of(2, 2)), (Placement{{0, 1}, {2, 3}}));
  c.slots.hold(std::vector<int>{2}, 7);
  EXPECT_FALSE(c.placer().place(job_of(2, 2)));
}

TEST(Placer, EveryHostWaitsForAHostStillConnectingAndSkipsHostsServicesFill) {
  Components c(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  c.hosts[1].state = HostState::connecting;
  EXPECT_FALSE(c.placer().place_on_every_host(job_of(1)));

  c.hosts[1].state = HostState::ready;
  Job service;
  service.id = 9;
  service.spec.service = ServiceSpec{"db"};
  c.services.started(service, t0);
  c.slots.hold(std::vector<int>{1}, 9);
  std::optional<std::vector<Placement>> copies = c.placer().place_on_every_host(job_of(1));
  ASSERT_TRUE(copies);
  EXPECT_EQ(*copies, (std::vector<Placement>{{{0}}}));
}

TEST(Placer, TheHeadWaitsForSlotsHeldOrGatedAndSaysWhichOfEachHost) {
  Fleet fleet = make_fleet({{"a", {"0", "1", "2"}}});
  fleet.slots[2].gpu_free = *parse_gpu_free("no-processes");
  Components c(std::move(fleet));
  c.slots.hold(std::vector<int>{0}, 7);
  EXPECT_EQ(c.placer().why_head_waits(job_of(3)),
            "the next job (queue line 3) needs 3 slots of one host, and too few are free "
            "(a: 1 of 3 free, 1 held by a job, 1 waiting for a free GPU)");
  EXPECT_EQ(c.placer().why_head_waits(job_of(4)),
            "the next job (queue line 3) needs 4 slots of one host, but the largest usable host "
            "has 3; edit the queue to go on");
}

TEST(Placer, ASlotIsOpenWhenFreeOnAReadyHostWithItsGateOpen) {
  Fleet fleet = make_fleet({{"a", {"0"}}, {"b", {"0"}}});
  fleet.slots[1].gpu_free = *parse_gpu_free("no-processes");
  Components c(std::move(fleet));
  c.slots.hold(std::vector<int>{0}, 7);
  EXPECT_FALSE(c.placer().any_slot_open());  // b's GPU was never looked at
  EXPECT_TRUE(c.placer().gates_waiting());

  c.hosts[1].state = HostState::reconnecting;
  EXPECT_FALSE(c.placer().gates_waiting());

  c.hosts[1].state = HostState::ready;
  ASSERT_EQ(c.gates.begin_due_looks(true, t0).size(), 1u);
  ASSERT_TRUE(c.gates.looked(1, testing::usage({{0, 0}}), t0));
  EXPECT_TRUE(c.placer().any_slot_open());
  EXPECT_FALSE(c.placer().gates_waiting());
}

}  // namespace
}  // namespace runner
