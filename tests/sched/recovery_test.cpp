// What the scheduler does when things go wrong: lost hosts, timeouts,
// retries, cancellation and the jobs of a dead run. Scripted executors,
// injected time.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <memory>

#include "runner/sched/scheduler.h"
#include "sched/fakes.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::FakeExecutor;
using testing::FakeHostOps;
using Campaign = testing::FakeRun;

Fleet two_hosts(int slots_each = 1) {
  std::vector<std::string> gpus;
  for (int i = 0; i < slots_each; ++i) gpus.push_back(std::to_string(i));
  return testing::make_fleet({{"a", gpus}, {"b", gpus}});
}

FakeExecutor::Outcome lasting(int steps, int code = 0) {
  return FakeExecutor::Outcome{.exit = JobExit::exited(code), .steps = steps};
}

TEST(Recovery, LostJobGoesBackToTheHeadAndRunsElsewhereWithTheSameId) {
  Campaign r(two_hosts());
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(5); };
  r.source.add("one");
  r.source.add("two");
  r.source.add("three");
  r.scheduler->start();
  r.tick();
  ASSERT_EQ(r.jobs_sent(0), (std::vector<std::string>{"one"}));
  r.executors[0]->drop();
  EXPECT_EQ(r.run(), 0);
  // Job 1 ("one") was lost on a, then ran (before "three") on b.
  auto ends = r.ends_of(1);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_TRUE(ends[0].lost());
  EXPECT_TRUE(ends[1].succeeded());
  ASSERT_GE(r.observer.finished.size(), 1u);
  EXPECT_TRUE(r.observer.finished[0].first.will_rerun());
  auto b = r.jobs_sent(1);
  ASSERT_GE(b.size(), 2u);
  EXPECT_EQ(b[0], "two");
  EXPECT_EQ(b[1], "one");
  int runs_of_three = 0;
  for (std::size_t h = 0; h < 2; ++h)
    for (const auto& c : r.jobs_sent(h)) runs_of_three += c == "three";
  EXPECT_EQ(runs_of_three, 1);
}

TEST(Recovery, LostHostReconnectsKillsLeftoversThenTakesJobsAgain) {
  Campaign r(two_hosts(), SchedulerOptions{.reconnect_first = 2s});
  // Long enough (100 ticks of 10 ms each) that host a is back before the end.
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(100); };
  for (int i = 0; i < 8; ++i) r.source.add("job" + std::to_string(i));
  r.scheduler->start();
  r.tick();
  r.tick();              // the hosts report the jobs' process groups
  long pgid = 1000 + 1;  // the fake's pgid for job 1, which ran on a
  r.executors[0]->drop();
  r.tick();
  EXPECT_TRUE(r.control_sent(0).empty()) << "nothing is sent to a host that is down";
  EXPECT_EQ(r.run(), 0);
  auto cleanup = r.control_sent(0);
  ASSERT_EQ(cleanup.size(), 1u);
  EXPECT_EQ(cleanup[0], FakeHostOps::k_kill_leftovers);
  // Only if it is still the job's: one of its processes carries the job's mark.
  EXPECT_EQ(r.host_ops[0]->leftover_checks,
            (std::vector<std::vector<ProcessGroup>>{{{pgid, r.executors[0]->group_mark(1)}}}));
  EXPECT_GT(r.jobs_sent(0).size(), 1u) << "host a rejoined the pool";
}

TEST(Recovery, AJobLostAloneIsKilledAtOnceOnItsLiveHost) {
  Campaign r(two_hosts());
  int runs_of_one = 0;
  for (auto& t : r.executors) {
    t->outcome = [&](const std::string& command) {
      if (command == "one" && runs_of_one++ == 0)
        return FakeExecutor::Outcome{.exit = JobExit::lost_because("channel broke"), .steps = 2};
      return lasting(2);
    };
  }
  for (const char* job : {"one", "two", "three", "four"}) r.source.add(job);
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  auto cleanup = r.control_sent(0);
  ASSERT_EQ(cleanup.size(), 1u) << "the lost job's group is killed while host a stays up";
  EXPECT_EQ(cleanup[0], FakeHostOps::k_kill_leftovers);
  ASSERT_EQ(r.host_ops[0]->leftover_checks.size(), 1u);
  ASSERT_EQ(r.host_ops[0]->leftover_checks[0].size(), 1u);
  EXPECT_EQ(r.host_ops[0]->leftover_checks[0][0].id, 1001);
  auto ends = r.ends_of(1);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_TRUE(ends[0].lost());
  EXPECT_TRUE(ends[1].succeeded());
  EXPECT_EQ(r.executors[0]->connects, 1) << "the host was never reconnected";
  EXPECT_GE(r.jobs_sent(0).size(), 2u) << "host a kept taking jobs";
}

TEST(Recovery, KeepOrphansLeavesLostProcessesAlone) {
  Campaign r(two_hosts(), SchedulerOptions{.keep_orphans = true});
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(3); };
  for (int i = 0; i < 6; ++i) r.source.add("j");
  r.scheduler->start();
  r.tick();
  r.executors[0]->drop();
  EXPECT_EQ(r.run(), 0);
  EXPECT_TRUE(r.control_sent(0).empty());
}

TEST(Recovery, AJobLostMoreOftenThanAllowedFails) {
  Campaign r(two_hosts(), SchedulerOptions{.max_requeue = 1});
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(4); };
  r.source.add("fragile");
  r.scheduler->start();
  r.tick();
  r.executors[0]->drop();  // first loss: put back, runs on b
  r.tick();
  r.tick();
  ASSERT_EQ(r.jobs_sent(1), (std::vector<std::string>{"fragile"}));
  r.executors[1]->drop();  // second loss: over the limit
  EXPECT_EQ(r.run(), 1);
  auto ends = r.ends_of(1);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_TRUE(ends[1].lost());
}

TEST(Recovery, AnEndingAllocationStartsNothingMoreAndItsLostJobsWaitForTheNextRun) {
  Campaign r(two_hosts());
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(1000); };
  for (const char* job : {"one", "two", "three", "four"}) r.source.add(job);
  r.scheduler->start();
  r.tick();
  r.tick();
  r.executors[0]->end_allocation();
  r.tick();
  r.tick();
  r.executors[1]->end_allocation();  // its job ends a moment later
  EXPECT_EQ(r.run(), 1);
  EXPECT_EQ(r.all_jobs_sent(), (std::vector<std::string>{"one", "two"}));
  for (JobId id : {1, 2}) {
    auto ends = r.ends_of(id);
    ASSERT_EQ(ends.size(), 1u) << id;
    EXPECT_TRUE(ends[0].lost()) << id;
  }
  for (const auto& [job, exit] : r.observer.finished)
    EXPECT_TRUE(job.will_rerun() && job.reruns_in_next_run()) << job.id;
  EXPECT_TRUE(r.control_sent(0).empty() && r.control_sent(1).empty())
      << "nothing is sent to a host whose allocation ends, not even a cleanup";
  ASSERT_EQ(r.observer.notices.size(), 1u);
  EXPECT_NE(r.observer.notices[0].find("Slurm is ending allocation 7 (state COMPLETING): no more "
                                       "jobs start"),
            std::string::npos)
      << r.observer.notices[0];
}

TEST(Recovery, JobsLostAsTheAllocationEndsWaitForTheNextRunWhateverTheMaxRequeue) {
  Campaign r(two_hosts(), SchedulerOptions{.max_requeue = 0});
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(1000); };
  for (const char* job : {"one", "two"}) r.source.add(job);
  r.scheduler->start();
  r.tick();
  r.tick();
  r.executors[0]->end_allocation();
  r.executors[1]->end_allocation();
  EXPECT_EQ(r.run(), 1);
  ASSERT_EQ(r.observer.finished.size(), 2u);
  for (const auto& [job, exit] : r.observer.finished) {
    EXPECT_TRUE(exit.lost()) << job.id;
    EXPECT_TRUE(job.will_rerun() && job.reruns_in_next_run()) << job.id;
  }
}

TEST(Recovery, TimeoutSendsTermThenKillAndRunsTheCancelCommand) {
  Campaign r(two_hosts(), SchedulerOptions{.kill_grace = 5s});
  r.executors[0]->outcome = [](const std::string&) { return lasting(1'000'000); };
  JobSpec job{"train", {}, 1, 1, 10s, "10s", std::nullopt, "pkill -f train-<<gpu>>"};
  r.source.jobs.push_back(job);
  r.scheduler->start();
  r.tick();
  r.tick();  // its process starts: the timeout counts from here
  ASSERT_EQ(r.scheduler->running_count(), 1u);
  EXPECT_EQ(*r.scheduler->deadline(), r.now + 10s);
  r.now += 10s;
  r.tick();
  auto& signals = r.executors[0]->signals;
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].second, SIGTERM);
  EXPECT_EQ(r.control_sent(0), (std::vector<std::string>{"pkill -f train-0"}));
  r.now += 5s;
  r.tick();
  ASSERT_EQ(signals.size(), 2u);
  EXPECT_EQ(signals[1].second, SIGKILL);
  EXPECT_EQ(r.run(), 1);
  auto ends = r.ends_of(1);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_TRUE(ends[0].timed_out);
  EXPECT_FALSE(ends[0].succeeded());
}

TEST(Recovery, DefaultTimeoutAppliesToJobsWithoutOne) {
  Campaign r(two_hosts(), SchedulerOptions{.default_timeout = 30s});
  r.executors[0]->outcome = [](const std::string&) { return lasting(1'000'000); };
  r.source.add("forever");
  r.scheduler->start();
  r.tick();
  r.tick();  // its process starts
  EXPECT_EQ(*r.scheduler->deadline(), r.now + 30s);
}

// Queues "flaky", which exits 3 the first time and 0 after, and runs.
int run_a_job_that_fails_once(Campaign& r, int retries) {
  auto runs = std::make_shared<int>(0);
  for (auto& t : r.executors)
    t->outcome = [runs](const std::string&) { return lasting(1, ++*runs == 1 ? 3 : 0); };
  JobSpec job{"flaky", {}, 1, 1};
  job.retries = retries;
  r.source.jobs.push_back(job);
  r.scheduler->start();
  return r.run();
}

TEST(Recovery, FailedJobWithRetriesRunsAgainOnAnotherSlot) {
  Campaign r(two_hosts());
  EXPECT_EQ(run_a_job_that_fails_once(r, 2), 0);
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"flaky"}));
  EXPECT_EQ(r.jobs_sent(1), (std::vector<std::string>{"flaky"})) << "the rerun avoids slot a";
  auto ends = r.ends_of(1);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(ends[0].code(), 3);
  EXPECT_TRUE(ends[1].succeeded());
}

TEST(Recovery, AJobRunAgainIsANewTaskSoALateReportOfItsFirstRunIsIgnored) {
  Campaign r(two_hosts());
  EXPECT_EQ(run_a_job_that_fails_once(r, 1), 0);
  ASSERT_EQ(r.executors[0]->started.size(), 1u);
  ASSERT_EQ(r.executors[1]->started.size(), 1u);
  TaskId first = r.executors[0]->started[0].first;
  EXPECT_NE(first, r.executors[1]->started[0].first) << "both runs of job #1 as one task";
  // A host that reports on the first run's task after the job ended (a
  // late end, a stray line of output) changes nothing.
  r.scheduler->task_exited(first, JobExit::exited(9));
  r.scheduler->task_output(first, OutputStream::out, "stray");
  EXPECT_EQ(r.ends_of(1).size(), 2u);
  EXPECT_EQ(std::count(r.observer.events.begin(), r.observer.events.end(), "output a gpu=0 stray"),
            0);
}

TEST(Recovery, RetriesRunOutAndTheJobFails) {
  Campaign r(two_hosts(), SchedulerOptions{.default_retries = 2});
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(1, 1); };
  r.source.add("broken");
  r.scheduler->start();
  EXPECT_EQ(r.run(), 1);
  EXPECT_EQ(r.ends_of(1).size(), 3u);
  ASSERT_GE(r.observer.finished.size(), 1u);
  EXPECT_EQ(r.observer.finished.back().first.attempt, 3);
}

TEST(Recovery, CancelStopsEveryJobAndRunsItsCancelCommand) {
  Campaign r(two_hosts());
  for (auto& t : r.executors) t->outcome = [](const std::string&) { return lasting(1'000'000); };
  JobSpec job{"bench <<gpu>>", {}, 1, 1};
  job.cancel = "docker exec c<<gpu>> pkill bench";
  r.source.jobs.push_back(job);
  r.source.jobs.push_back(job);
  r.scheduler->start();
  r.tick();
  r.scheduler->cancel_running(r.now);
  EXPECT_EQ(r.control_sent(0), (std::vector<std::string>{"docker exec c0 pkill bench"}));
  EXPECT_EQ(r.run(), 130);
  for (JobId id : {JobId{1}, JobId{2}}) {
    auto ends = r.ends_of(id);
    ASSERT_EQ(ends.size(), 1u);
    EXPECT_TRUE(ends[0].cancelled);
  }
}

TEST(Recovery, OrphansOfADeadRunAreKilledThenRunFirst) {
  Campaign r(two_hosts());
  r.source.add("from the queue");
  OrphanJob orphan{41, JobSpec{"interrupted job", {}, 1, 1}, 0, ProcessGroup{777, "0a-3"}, 1, 0};
  r.next_id = 42;
  r.scheduler->adopt_orphans({orphan});
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  auto cleanup = r.control_sent(0);
  ASSERT_EQ(cleanup.size(), 1u);
  EXPECT_EQ(cleanup[0], FakeHostOps::k_kill_leftovers);
  EXPECT_EQ(r.host_ops[0]->leftover_checks,
            (std::vector<std::vector<ProcessGroup>>{{{777, "0a-3"}}}));
  // The orphan ran again under its own id, and before the queue's job.
  auto ends = r.ends_of(41);
  ASSERT_EQ(ends.size(), 1u);
  ASSERT_GE(r.observer.finished.size(), 1u);
  EXPECT_EQ(r.observer.finished.front().first.attempt, 2);
  std::vector<std::string> starts;
  for (const auto& e : r.observer.events)
    if (e.rfind("start ", 0) == 0) starts.push_back(e);
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_NE(starts[0].find("interrupted job"), std::string::npos);
}

TEST(Recovery, OrphanWithoutProcessGroupIsRunAgainWithAWarning) {
  Campaign r(two_hosts());
  r.scheduler->adopt_orphans({OrphanJob{7, JobSpec{"x", {}, 1, 1}, 1, ProcessGroup{}, 1, 0}});
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.ends_of(7).size(), 1u);
  ASSERT_FALSE(r.observer.notices.empty());
  EXPECT_NE(r.observer.notices[0].find("by hand"), std::string::npos);
}

TEST(Recovery, RefusedKeysAreNotRetried) {
  Campaign r(two_hosts());
  r.executors[0]->connect_error = Status{ErrorKind::auth, "a: denied"};
  r.source.add("j");
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.executors[0]->connects, 1);
}

TEST(Recovery, EveryStartIsRecordedAndSyncedBeforeItIsSent) {
  Campaign r(two_hosts(2));
  for (int i = 0; i < 5; ++i) r.source.add("job" + std::to_string(i));
  r.scheduler->start();
  r.run();
  const auto& events = r.observer.events;
  std::size_t sent = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].rfind("sent ", 0) != 0 || events[i].find(" job") == std::string::npos) continue;
    ++sent;
    std::string command = events[i].substr(events[i].rfind(' ') + 1);
    auto before = events.rbegin() + (events.size() - i);
    auto sync = std::find(before, events.rend(), "journal sync");
    auto recorded = std::find_if(before, events.rend(), [&](const std::string& e) {
      return e.rfind("journal job_start ", 0) == 0 && e.ends_with(" " + command);
    });
    ASSERT_NE(recorded, events.rend()) << events[i] << " was sent unrecorded";
    EXPECT_TRUE(sync < recorded) << "no sync between its job_start and " << events[i];
  }
  EXPECT_EQ(sent, 5u);
}

}  // namespace
}  // namespace runner
