// Jobs that span hosts (`nodes: N`) against scripted executors: placement
// all at once or not at all, the master port, and ranks that end together.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::FakeHostOps;
using testing::make_fleet;
using Harness = testing::FakeRun;

JobSpec on_nodes(std::string command, int nodes, int slots = 1) {
  JobSpec job{std::move(command), {}, slots, 1};
  job.nodes = nodes;
  return job;
}

FakeExecutor::Outcome lasting(int steps) { return FakeExecutor::Outcome{.steps = steps}; }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The job commands (not the runner's own) sent to host `h` that contain `part`.
int sent_with(const Harness& h, std::size_t host, const std::string& part) {
  auto sent = h.jobs_sent(host);
  return static_cast<int>(
      std::count_if(sent.begin(), sent.end(), [&](const auto& c) { return contains(c, part); }));
}

TEST(MultiNode, EachRankRunsOnADifferentHostWithItsVariablesAndEnvironment) {
  Harness h(make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}, {"c", {"0", "1"}}}));
  h.source.jobs.push_back(
      on_nodes("train --rank <<rank>> --of <<nnodes>> --master <<master_addr>>:<<master_port>> "
               "--hosts <<hosts>> --per-node <<slots_per_node>> --file <<hostfile>> gpu=<<gpu>>",
               3, 2));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  for (std::size_t host = 0; host < 3; ++host) {
    auto sent = h.jobs_sent(host);
    ASSERT_EQ(sent.size(), 1u) << host;
    std::string rank = std::to_string(host);
    EXPECT_TRUE(contains(sent[0], "train --rank " + rank +
                                      " --of 3 --master 10.0.0.1:29500 "
                                      "--hosts 10.0.0.1,10.0.0.2,10.0.0.3 --per-node 2 --file "
                                      "/tmp/runner-run-1-1.hostfile gpu=0,1"))
        << sent[0];
    EXPECT_TRUE(contains(sent[0], "export RUNNER_RANK='" + rank + "'")) << sent[0];
    EXPECT_TRUE(contains(sent[0], "export RUNNER_MASTER_PORT='29500'")) << sent[0];
    // Written beside its path, then renamed onto it.
    EXPECT_TRUE(contains(sent[0],
                         "printf '%s' '10.0.0.1 slots=2\n10.0.0.2 slots=2\n10.0.0.3 "
                         "slots=2\n' > '/tmp/runner-run-1-1.hostfile.runner-"))
        << sent[0];
    EXPECT_TRUE(contains(sent[0], ".tmp' '/tmp/runner-run-1-1.hostfile' || {")) << sent[0];
  }
  // The ports in use were read on rank 0's host only; once the job ended,
  // its hostfile was removed from every host.
  for (std::size_t host = 0; host < 3; ++host) {
    auto control = h.control_sent(host);
    ASSERT_EQ(control.size(), host == 0 ? 2u : 1u) << host;
    EXPECT_EQ(h.host_ops[host]->surveys, host == 0 ? 1 : 0) << host;
    EXPECT_EQ(control.back(), FakeHostOps::k_remove_files) << host;
    EXPECT_EQ(h.host_ops[host]->removals,
              (std::vector<std::vector<std::string>>{{"/tmp/runner-run-1-1.hostfile"}}))
        << host;
  }
  ASSERT_EQ(h.observer.finished.size(), 1u);
  EXPECT_EQ(h.observer.finished[0].first.tasks.size(), 3u);
}

TEST(MultiNode, TheMasterPortIsFreeOnRankZerosHostAndDiffersForEveryRunningJob) {
  Harness h(make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}}));
  for (auto* t : h.executors) t->outcome = [](const std::string&) { return lasting(1); };
  h.executors[0]->outcome = [](const std::string& command) {
    return lasting(command == FakeHostOps::k_survey ? 1 : 20);
  };
  h.host_ops[0]->survey = [] {
    // 29500 listens, 29501 is in TIME_WAIT: neither is taken.
    return NetworkSurvey{.ports_in_use = {29500, 29501}, .listening_ports = {29500}};
  };
  h.source.jobs.push_back(on_nodes("first <<master_port>>", 2));
  h.source.jobs.push_back(on_nodes("second <<master_port>>", 2));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(sent_with(h, 0, "first 29502"), 1);
  EXPECT_EQ(sent_with(h, 1, "first 29502"), 1);
  EXPECT_EQ(sent_with(h, 0, "second 29503"), 1);
  EXPECT_EQ(sent_with(h, 1, "second 29503"), 1);
}

TEST(MultiNode, RankZeroReachedOnLoopbackIsGivenOneOfItsHostsAddressesForTheOthers) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  h.executors[0]->reached_as = "127.0.0.1";
  h.executors[0]->outcome = [](const std::string&) { return lasting(1); };
  h.host_ops[0]->survey = [] { return NetworkSurvey{.addresses = {"192.168.5.5", "10.1.1.1"}}; };
  h.source.jobs.push_back(on_nodes("train <<master_addr>> <<hosts>>", 2));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(sent_with(h, 1, "train 192.168.5.5 192.168.5.5,10.0.0.2"), 1);
}

TEST(MultiNode, AJobWaitsForAllItsHostsHoldingNothingAndNothingBehindItPasses) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}}));
  for (auto* t : h.executors)
    t->outcome = [](const std::string& c) { return lasting(contains(c, "long") ? 30 : 2); };
  h.source.add("long");
  h.source.add("long");
  h.source.jobs.push_back(on_nodes("gang", 2));
  h.source.add("small");
  h.scheduler->start();
  h.tick();
  h.tick();
  // Two hosts are busy, one is free: the gang job needs two, so it takes
  // none, and the small job behind it waits too.
  int free = 0;
  for (auto* t : h.executors) free += t->running() == 0;
  EXPECT_EQ(free, 1);
  EXPECT_EQ(h.source.jobs.size(), 2u);
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(h.observer.finished.size(), 4u);
  // FIFO: the small job was not taken before the gang job had its hosts,
  // when the long jobs ended.
  auto at = [&](const std::string& event) {
    return std::find(h.observer.events.begin(), h.observer.events.end(), event) -
           h.observer.events.begin();
  };
  EXPECT_LT(at("end a gpu=0 long"), at("start c gpu=0 small"));
}

TEST(MultiNode, TwoJobsThatEachNeedMostHostsNeverDeadlock) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}}));
  for (auto* t : h.executors) t->outcome = [](const std::string&) { return lasting(3); };
  for (int i = 0; i < 4; ++i) h.source.jobs.push_back(on_nodes("gang" + std::to_string(i), 2));
  h.source.jobs.push_back(on_nodes("all", 3));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(h.observer.finished.size(), 5u);
  for (const auto& [job, exit] : h.observer.finished) EXPECT_TRUE(exit.succeeded());
}

TEST(MultiNode, ARankThatFailsStopsTheOthersAndTheJobEndsAsThatRank) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}}));
  for (auto* t : h.executors)
    t->outcome = [](const std::string& c) { return lasting(contains(c, "train") ? 1'000'000 : 1); };
  h.executors[1]->outcome = [](const std::string&) {
    return FakeExecutor::Outcome{.exit = JobExit::exited(3), .steps = 3};
  };
  h.source.jobs.push_back(on_nodes("train", 3));
  h.scheduler->start();
  for (int i = 0; i < 12; ++i) h.tick();
  // Rank 1 ended: ranks 0 and 2 got TERM, rank 1 nothing.
  ASSERT_EQ(h.executors[0]->signals.size(), 1u);
  EXPECT_EQ(h.executors[0]->signals[0].second, SIGTERM);
  ASSERT_EQ(h.executors[2]->signals.size(), 1u);
  EXPECT_TRUE(h.executors[1]->signals.empty());
  // They ignore TERM: KILL after the grace period.
  EXPECT_EQ(h.run(), 1);
  EXPECT_EQ(h.executors[0]->signals.back().second, SIGKILL);
  ASSERT_EQ(h.observer.finished.size(), 1u);
  const auto& [job, exit] = h.observer.finished[0];
  EXPECT_EQ(exit.code(), 3);
  EXPECT_EQ(job.failed_rank(), 1);
  bool said = std::any_of(h.observer.notices.begin(), h.observer.notices.end(), [](auto& n) {
    return contains(n, "rank 1") && contains(n, "stopping its other ranks");
  });
  EXPECT_TRUE(said);
}

TEST(MultiNode, RetriesRunTheWholeJobAgain) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  int failures = 1;
  h.executors[1]->outcome = [&](const std::string& command) {
    if (contains(command, "train") && failures-- > 0)
      return FakeExecutor::Outcome{.exit = JobExit::exited(1), .steps = 2};
    return lasting(2);
  };
  JobSpec job = on_nodes("train <<rank>>", 2);
  job.retries = 1;
  h.source.jobs.push_back(job);
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(sent_with(h, 0, "train 0"), 2);
  EXPECT_EQ(sent_with(h, 1, "train 1"), 2);
  ASSERT_EQ(h.observer.finished.size(), 2u);
  EXPECT_EQ(h.observer.finished[1].first.attempt, 2);
  EXPECT_TRUE(h.observer.finished[1].second.succeeded());
  // Each launch had a hostfile of its own, removed when it ended: the
  // removal of the first cannot meet the second's.
  EXPECT_EQ(sent_with(h, 1, "/tmp/runner-run-1-1.hostfile"), 1);
  EXPECT_EQ(sent_with(h, 1, "/tmp/runner-run-1-2.hostfile"), 1);
  for (std::size_t host = 0; host < 2; ++host) {
    const auto& removals = h.host_ops[host]->removals;
    for (const char* hostfile : {"/tmp/runner-run-1-1.hostfile", "/tmp/runner-run-1-2.hostfile"})
      EXPECT_EQ(std::count(removals.begin(), removals.end(), std::vector<std::string>{hostfile}), 1)
          << host << hostfile;
  }
}

TEST(MultiNode, AHostLostUnderOneRankPutsTheWholeJobBack) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}, {"c", {"0"}}}));
  for (auto* t : h.executors)
    t->outcome = [](const std::string& c) { return lasting(c == FakeHostOps::k_survey ? 1 : 50); };
  h.source.jobs.push_back(on_nodes("train <<rank>>", 2));
  h.scheduler->start();
  for (int i = 0; i < 6; ++i) h.tick();
  ASSERT_EQ(sent_with(h, 1, "train 1"), 1);
  h.executors[1]->drop();
  h.executors[1]->connect_error = Status{ErrorKind::connect, "refused"};
  EXPECT_EQ(h.run(), 0);
  // Rank 0 was stopped; the job ran again on the hosts that are left.
  ASSERT_GE(h.executors[0]->signals.size(), 1u);
  EXPECT_EQ(h.executors[0]->signals.front().second, SIGTERM);
  ASSERT_EQ(h.observer.finished.size(), 2u);
  EXPECT_TRUE(h.observer.finished[0].second.lost());
  EXPECT_EQ(h.observer.finished[0].first.failed_rank(), 1);
  EXPECT_EQ(h.observer.finished[1].first.attempt, 2);
  EXPECT_TRUE(h.observer.finished[1].second.succeeded());
  EXPECT_EQ(sent_with(h, 2, "train 1"), 1);
}

TEST(MultiNode, AJobNeedingMoreHostsThanAreUsableIsSaid) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  h.source.jobs.push_back(on_nodes("train", 3));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 1);
  bool said = std::any_of(h.observer.notices.begin(), h.observer.notices.end(), [](auto& n) {
    return contains(n, "needs 3 nodes with 1 slots each, but 2 usable hosts have that many");
  });
  EXPECT_TRUE(said) << (h.observer.notices.empty() ? "" : h.observer.notices.front());
}

TEST(MultiNode, BroadcastSaysAJobWithNodesCannotRun) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}}), SchedulerOptions{.mode = Mode::broadcast});
  h.source.jobs.push_back(on_nodes("train", 2));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 1);
  ASSERT_FALSE(h.observer.notices.empty());
  EXPECT_TRUE(contains(h.observer.notices.front(), "has `nodes:`, but broadcast"));
  EXPECT_TRUE(h.all_jobs_sent().empty());
}

}  // namespace
}  // namespace runner
