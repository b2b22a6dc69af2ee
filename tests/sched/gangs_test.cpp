// Jobs that span hosts, without a run: the layout a staged job gets (each
// rank's address, a hostfile per launch), the master port it is given, rank
// 0 reached from elsewhere, and where its hostfile is removed.
#include "runner/sched/gangs.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"
#include "support/no_executor_events.h"

namespace runner {
namespace {

using testing::FakeBackend;
using testing::FakeExecutor;
using testing::make_fleet;

// Gangs over a fleet whose executors reach host h as 10.0.0.<h + 1>.
struct Fixture {
  explicit Fixture(Fleet of) : fleet(std::move(of)) {
    std::vector<testing::FakeHostOps*> no_host_ops;
    FakeBackend backend(fleet, made, no_host_ops);
    executors = backend.executors(events);
  }

  Job job(JobId id, int nodes) {
    Job job;
    job.id = id;
    job.spec.command = "train";
    job.spec.nodes = nodes;
    return job;
  }
  // Stages job `id` on `placement` and answers with `survey`: what it
  // became, ready (expected).
  GangReady ready(JobId id, const Placement& placement, const Result<NetworkSurvey>& survey) {
    gangs.stage(job(id, static_cast<int>(placement.size())), placement);
    auto outcome = gangs.staged(id, survey);
    EXPECT_TRUE(outcome && std::holds_alternative<GangReady>(*outcome));
    return std::get<GangReady>(std::move(*outcome));
  }
  GangReady ready(JobId id, const Placement& placement, std::set<int> ports_in_use = {}) {
    return ready(id, placement, NetworkSurvey{.ports_in_use = std::move(ports_in_use)});
  }

  Fleet fleet;
  testing::NoExecutorEvents events;
  std::vector<FakeExecutor*> made;
  std::vector<std::unique_ptr<Executor>> executors;
  Gangs gangs{fleet, executors, "run-9"};
};

TEST(Gangs, StagingReturnsRankZerosHostAndHoldsTheJobUntilItsAnswer) {
  Fixture f(make_fleet({{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}}));
  EXPECT_EQ(f.gangs.stage(f.job(4, 2), Placement{{2}, {0}}), 2);
  EXPECT_TRUE(f.gangs.staging());
  EXPECT_FALSE(f.gangs.staged(5, NetworkSurvey{}));
  EXPECT_TRUE(f.gangs.staged(4, NetworkSurvey{}));
  EXPECT_FALSE(f.gangs.staging());
  EXPECT_FALSE(f.gangs.staged(4, NetworkSurvey{}));
}

TEST(Gangs, TheLayoutHasEachRanksAddressAndAHostfileOfItsOwnLaunch) {
  Fixture f(make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}, {"c", {"0", "1"}}}));
  f.fleet.slots[4].params.emplace_back(std::string(k_address_param), "192.168.0.3");
  f.fleet.slots[5].params.emplace_back(std::string(k_address_param), "192.168.0.3");
  GangReady first = f.ready(7, Placement{{0, 1}, {4, 5}});
  ASSERT_TRUE(first.job.layout);
  const NodeLayout& layout = *first.job.layout;
  EXPECT_EQ(layout.ranks, (Placement{{0, 1}, {4, 5}}));
  EXPECT_EQ(layout.addresses, (std::vector<std::string>{"10.0.0.1", "192.168.0.3"}));
  EXPECT_EQ(layout.master_port, k_first_master_port);
  EXPECT_EQ(layout.hostfile, "/tmp/runner-run-9-7-1.hostfile");
  EXPECT_EQ(first.placement, layout.ranks);
  EXPECT_TRUE(first.warnings.empty());
  // The same job launched again has a hostfile of its own.
  (void)f.gangs.ended(first.job);
  EXPECT_EQ(f.ready(7, Placement{{2}, {0}}).job.layout->hostfile, "/tmp/runner-run-9-7-2.hostfile");
}

TEST(Gangs, AProvisionalLayoutHasNoPortAndCountsNoLaunch) {
  Fixture f(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  NodeLayout layout = f.gangs.provisional_layout(Placement{{1}, {0}});
  EXPECT_EQ(layout.addresses, (std::vector<std::string>{"10.0.0.2", "10.0.0.1"}));
  EXPECT_EQ(layout.master_port, 0);
  EXPECT_EQ(f.ready(3, Placement{{0}, {1}}).job.layout->hostfile, "/tmp/runner-run-9-3-1.hostfile");
}

TEST(Gangs, TheMasterPortAvoidsPortsInUseAndThoseGivenToOtherJobsOnTheSameHost) {
  Fixture f(make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}}));
  GangReady first = f.ready(1, Placement{{0}, {2}}, {29500});
  EXPECT_EQ(first.job.layout->master_port, 29501);
  EXPECT_EQ(f.ready(2, Placement{{1}, {3}}, {29500}).job.layout->master_port, 29502);
  // Rank 0 on another host: what was given on a does not count.
  EXPECT_EQ(f.ready(3, Placement{{2}, {0}}, {29500}).job.layout->master_port, 29501);
  // Once the first ended, its port is free to give again.
  (void)f.gangs.ended(first.job);
  EXPECT_EQ(f.ready(4, Placement{{0}, {2}}, {29500}).job.layout->master_port, 29501);
}

TEST(Gangs, PortsThatCouldNotBeReadAreSaidAndThePortIsChosenWithoutThem) {
  Fixture f(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  GangReady ready = f.ready(6, Placement{{1}, {0}}, Status::error("no /proc here"));
  EXPECT_EQ(ready.job.layout->master_port, 29500);
  ASSERT_EQ(ready.warnings.size(), 1u);
  EXPECT_EQ(ready.warnings[0],
            "#6: could not read the ports in use on b (no /proc here); its master port is "
            "chosen without them");
}

TEST(Gangs, RankZeroOnLoopbackIsReachedByItsHostsFirstAddressWhenOthersAreElsewhere) {
  Fixture f(make_fleet({{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}}));
  f.made[0]->reached_as = "127.0.0.1";
  f.made[2]->reached_as = "localhost";
  NetworkSurvey survey{.addresses = {"192.168.5.5", "10.1.1.1"}};
  GangReady elsewhere = f.ready(1, Placement{{0}, {1}}, survey);
  EXPECT_EQ(elsewhere.job.layout->addresses, (std::vector<std::string>{"192.168.5.5", "10.0.0.2"}));
  EXPECT_TRUE(elsewhere.warnings.empty());
  // Every rank on loopback: they meet there.
  GangReady together = f.ready(2, Placement{{0}, {2}}, survey);
  EXPECT_EQ(together.job.layout->addresses, (std::vector<std::string>{"127.0.0.1", "localhost"}));
  // No other address to give: said, and left as it is.
  GangReady unreachable = f.ready(3, Placement{{0}, {1}});
  EXPECT_EQ(unreachable.job.layout->addresses.front(), "127.0.0.1");
  ASSERT_EQ(unreachable.warnings.size(), 1u);
  EXPECT_NE(unreachable.warnings[0].find("give it `addr:` in the hosts file"), std::string::npos);
}

TEST(Gangs, AJobWhoseRankZeroHostWasLostGoesBackQueuedWithItsPlacement) {
  Fixture f(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  f.gangs.stage(f.job(8, 2), Placement{{1}, {0}});
  auto outcome = f.gangs.staged(8, Status{ErrorKind::disconnected, "dropped"});
  ASSERT_TRUE(outcome);
  auto* lost = std::get_if<GangHostLost>(&*outcome);
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->job.id, 8u);
  EXPECT_TRUE(std::holds_alternative<Queued>(lost->job.state));
  EXPECT_FALSE(lost->job.layout);
  EXPECT_EQ(lost->placement, (Placement{{1}, {0}}));
  EXPECT_FALSE(f.gangs.staging());
}

TEST(Gangs, AHostfileIsRemovedWhereARankRanAndEndedOnItsHost) {
  Fixture f(make_fleet({{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}}));
  Job job = f.ready(5, Placement{{0}, {1}, {2}}).job;
  for (int rank = 0; rank < 3; ++rank) {
    Task task;
    task.rank = rank;
    task.host = rank;
    task.group.id = 100 + rank;
    task.exit = rank == 1 ? JobExit::lost_because("connection lost") : JobExit::exited(0);
    job.tasks.push_back(task);
  }
  job.tasks[2].group.id = 0;  // never started
  HostfileRemoval removal = f.gangs.ended(job);
  EXPECT_EQ(removal.job, 5u);
  EXPECT_EQ(removal.path, "/tmp/runner-run-9-5-1.hostfile");
  EXPECT_EQ(removal.hosts, (std::set<int>{0}));
  // A job of one host has no hostfile.
  EXPECT_TRUE(f.gangs.ended(f.job(6, 1)).hosts.empty());
}

}  // namespace
}  // namespace runner
