// The scheduling policy against scripted executors: no sockets, no sleeps;
// time is passed in.
#include "runner/sched/scheduler.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <map>
#include <memory>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::make_fleet;
using Harness = testing::FakeRun;

TEST(Scheduler, QueueModeRunsEveryJobOnceFifo) {
  Harness h(make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}}));
  for (int i = 0; i < 9; ++i) h.source.add("job" + std::to_string(i));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  auto started = h.all_jobs_sent();
  ASSERT_EQ(started.size(), 9u);
  std::sort(started.begin(), started.end());
  for (int i = 0; i < 9; ++i) EXPECT_EQ(started[i], "job" + std::to_string(i));
  // FIFO: the observer saw starts in queue order.
  std::vector<std::string> starts;
  for (const auto& e : h.observer.events)
    if (e.rfind("start ", 0) == 0) starts.push_back(e.substr(e.rfind(' ') + 1));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(starts[i], "job" + std::to_string(i));
}

TEST(Scheduler, AJobLastsUntilTheRoundInWhichItsEndIsReported) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.executors[0]->outcome = [](const std::string&) { return FakeExecutor::Outcome{.steps = 3}; };
  h.source.add("one");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  // Sent in one round; its executor reports its process's start the next
  // round and its end three rounds (of 10 ms) after sending, before the
  // scheduler's own step of that round: it ran from start to end.
  ASSERT_EQ(h.observer.durations.size(), 1u);
  EXPECT_EQ(h.observer.durations[0], std::chrono::milliseconds(20));
}

TEST(Scheduler, NeverRunsMoreJobsThanSlots) {
  Harness h(make_fleet({{"a", {"0", "1"}}, {"b", {"0"}}}));
  for (auto& t : h.executors)
    t->outcome = [](const std::string&) { return FakeExecutor::Outcome{.steps = 3}; };
  for (int i = 0; i < 10; ++i) h.source.add("j");
  h.scheduler->start();
  std::size_t peak = 0;
  for (int i = 0; i < 200 && !h.scheduler->finished(); ++i) {
    h.tick();
    peak = std::max(peak, h.scheduler->running_count());
    EXPECT_LE(h.executors[0]->running(), 2u);
    EXPECT_LE(h.executors[1]->running(), 1u);
  }
  EXPECT_EQ(peak, 3u);
  EXPECT_EQ(h.scheduler->exit_code(), 0);
}

TEST(Scheduler, MultiSlotJobTakesSlotsOfOneHost) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"2", "3"}}}));
  h.source.add("train", 2);
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  ASSERT_EQ(h.executors[1]->started.size(), 1u);
  EXPECT_TRUE(h.executors[0]->started.empty());
  ASSERT_EQ(h.observer.finished.size(), 1u);
  EXPECT_EQ(h.observer.finished[0].first.label(), "b gpu=2,3");
  EXPECT_EQ(h.observer.finished[0].first.slots(), (std::vector<int>{1, 2}));
}

TEST(Scheduler, AMultiSlotJobGetsAnAlignedBlockOfSlots) {
  // With slot 0 busy, a 2-slot job gets the pair 2,3, not 1,2; with
  // `allocation_policy: buddy` a 2-slot job waits for an aligned pair.
  Harness h(make_fleet({{"a", {"0", "1", "2", "3"}}}));
  h.executors[0]->outcome = [](const std::string& command) {
    return FakeExecutor::Outcome{.steps = command == "first" ? 2 : 5};
  };
  h.source.add("first");
  h.source.add("pair", 2);
  JobSpec buddy{"buddy", {}, 2, 3};
  buddy.allocation = Allocation::buddy;
  h.source.jobs.push_back(buddy);
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  std::map<std::string, std::vector<int>> slots;
  for (const auto& [job, exit] : h.observer.finished)
    slots[job.tasks.front().command] = job.slots();
  EXPECT_EQ(slots["pair"], (std::vector<int>{2, 3}));
  // Slot 1 is free at once, but 1 alone makes no aligned pair: it waits
  // for 0,1 once "first" ends.
  EXPECT_EQ(slots["buddy"], (std::vector<int>{0, 1}));
}

TEST(Scheduler, HeadOfLineJobWaitsForEnoughSlots) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  h.executors[0]->outcome = [](const std::string& c) {
    return FakeExecutor::Outcome{.steps = c == "long" ? 5 : 1};
  };
  h.source.add("long");
  h.source.add("pair", 2);
  h.source.add("after");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  // "after" must not overtake "pair" although a slot was free meanwhile.
  std::vector<std::string> order;
  for (const auto& [id, cmd] : h.executors[0]->started) order.push_back(cmd);
  EXPECT_EQ(order, (std::vector<std::string>{"long", "pair", "after"}));
}

TEST(Scheduler, JobLargerThanEveryHostEndsTheRunWithAnError) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  h.source.add("huge", 4);
  h.scheduler->start();
  EXPECT_EQ(h.run(), 1);
  EXPECT_TRUE(h.executors[0]->started.empty());
  ASSERT_FALSE(h.observer.notices.empty());
  EXPECT_NE(h.observer.notices[0].find("needs 4 slots"), std::string::npos);
}

TEST(Scheduler, FailedJobMakesExitCodeOne) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.executors[0]->outcome = [](const std::string& c) {
    return FakeExecutor::Outcome{.exit = JobExit::exited(c == "bad" ? 3 : 0)};
  };
  h.source.add("good");
  h.source.add("bad");
  h.source.add("good");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 1);
  EXPECT_EQ(h.all_jobs_sent().size(), 3u);  // queue mode goes on after a failure
}

TEST(Scheduler, UnreachableHostLeavesTheOthersWorking) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  h.executors[0]->connect_error = Status{ErrorKind::connect, "a: refused"};
  for (int i = 0; i < 4; ++i) h.source.add("j");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_TRUE(h.executors[0]->started.empty());
  EXPECT_EQ(h.executors[1]->started.size(), 4u);
  EXPECT_NE(std::find(h.observer.events.begin(), h.observer.events.end(), "failed a: a: refused"),
            h.observer.events.end());
}

TEST(Scheduler, NoUsableHostIsAFailure) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.executors[0]->connect_error = Status{ErrorKind::auth, "a: denied"};
  h.source.add("j");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 1);
}

TEST(Scheduler, BroadcastRunsEachJobOnEverySlotInLockstep) {
  Harness h(make_fleet({{"a", {"0", "1"}}, {"b", {"0"}}}),
            SchedulerOptions{.mode = Mode::broadcast});
  // Slot a/0 is slow; no slot may begin job 2 before every slot ended job 1.
  for (auto& t : h.executors)
    t->outcome = [](const std::string& c) {
      return FakeExecutor::Outcome{.steps = c.find("gpu=0 host=a") != std::string::npos ? 4 : 1};
    };
  h.source.add("step1 gpu=<<gpu>> host=<<hostname>>");
  h.source.add("step2 gpu=<<gpu>> host=<<hostname>>");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(h.all_jobs_sent().size(), 6u);
  std::size_t last_end_of_1 = 0, first_start_of_2 = h.observer.events.size();
  for (std::size_t i = 0; i < h.observer.events.size(); ++i) {
    const auto& e = h.observer.events[i];
    if (e.rfind("end ", 0) == 0 && e.find("step1") != std::string::npos) last_end_of_1 = i;
    if (e.rfind("start ", 0) == 0 && e.find("step2") != std::string::npos)
      first_start_of_2 = std::min(first_start_of_2, i);
  }
  EXPECT_LT(last_end_of_1, first_start_of_2);
}

// Hosts a and b, where every job on b fails, with the steps "one" and "two"
// queued.
std::unique_ptr<Harness> two_steps_failing_on_b(SchedulerOptions options) {
  auto h = std::make_unique<Harness>(make_fleet({{"a", {"0"}}, {"b", {"0"}}}), options);
  h->executors[1]->outcome = [](const std::string&) {
    return FakeExecutor::Outcome{.exit = JobExit::exited(1)};
  };
  h->source.add("one");
  h->source.add("two");
  return h;
}

TEST(Scheduler, BroadcastStopsAfterAFailedStep) {
  auto h = two_steps_failing_on_b({.mode = Mode::broadcast});
  h->scheduler->start();
  EXPECT_EQ(h->run(), 1);
  EXPECT_EQ(h->all_jobs_sent().size(), 2u);
  EXPECT_EQ(h->source.jobs.size(), 1u);  // "two" stays in the queue
}

TEST(Scheduler, BroadcastIgnoreErrorsGoesOn) {
  auto h = two_steps_failing_on_b({.mode = Mode::broadcast, .ignore_errors = true});
  h->scheduler->start();
  EXPECT_EQ(h->run(), 1);
  EXPECT_EQ(h->all_jobs_sent().size(), 4u);
  EXPECT_TRUE(h->source.jobs.empty());
}

TEST(Scheduler, StopSchedulingLetsRunningJobsFinish) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.executors[0]->outcome = [](const std::string&) { return FakeExecutor::Outcome{.steps = 3}; };
  h.source.add("one");
  h.source.add("two");
  h.scheduler->start();
  h.tick();
  h.scheduler->stop_scheduling();
  EXPECT_EQ(h.run(), 130);
  EXPECT_EQ(h.all_jobs_sent(), (std::vector<std::string>{"one"}));
  EXPECT_TRUE(h.executors[0]->signals.empty());
  EXPECT_EQ(h.source.jobs.size(), 1u);
}

TEST(Scheduler, NoJobStartsWhileTheRunLogRefusesToSyncAndAllRunOnceItSyncs) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  for (int i = 0; i < 5; ++i) h.source.add("job" + std::to_string(i));
  h.run_log.refuses_sync = true;
  h.scheduler->start();
  for (int i = 0; i < 300; ++i) h.tick();
  EXPECT_TRUE(h.all_jobs_sent().empty()) << "a job started that the journal does not hold";
  // Taken (their starts wait to be written) only as far as the slots go.
  EXPECT_EQ(h.source.jobs.size(), 3u);
  EXPECT_FALSE(h.scheduler->finished());
  h.run_log.refuses_sync = false;
  EXPECT_EQ(h.run(), 0);
  auto sent = h.all_jobs_sent();
  std::sort(sent.begin(), sent.end());
  EXPECT_EQ(sent, (std::vector<std::string>{"job0", "job1", "job2", "job3", "job4"}));
}

TEST(Scheduler, JobsTakenButNotStartedEndWhenStoppedWhileTheRunLogRefusesToSync) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.source.add("one");
  h.run_log.refuses_sync = true;
  h.scheduler->start();
  for (int i = 0; i < 10; ++i) h.tick();
  h.scheduler->stop_scheduling();
  EXPECT_EQ(h.run(), 130);
  EXPECT_TRUE(h.all_jobs_sent().empty());
  ASSERT_EQ(h.observer.finished.size(), 1u);
  EXPECT_EQ(h.observer.finished[0].second.error(), "not started: the journal could not be written");
}

TEST(Scheduler, RecordsAJobsStartGroupAndEndBeforeItShowsThem) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.source.add("one");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  const auto& events = h.observer.events;
  auto at = [&](const std::string& event) {
    return std::find(events.begin(), events.end(), event) - events.begin();
  };
  ASSERT_LT(at("journal job_end #1"), static_cast<long>(events.size()));
  EXPECT_LT(at("journal job_start #1 one"), at("start a gpu=0 one"));
  EXPECT_LT(at("start a gpu=0 one"), at("journal job_pgid #1"));
  EXPECT_LT(at("journal job_pgid #1"), at("journal job_end #1"));
  EXPECT_LT(at("journal job_end #1"), at("end a gpu=0 one"));
  ASSERT_EQ(h.run_log.starts.size(), 1u);
  EXPECT_EQ(h.run_log.starts[0].host, "a");
}

TEST(Scheduler, RecordsAHostThatFailed) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  h.executors[0]->connect_error = Status{ErrorKind::connect, "a: refused"};
  h.source.add("one");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  const auto& events = h.observer.events;
  auto recorded = std::find(events.begin(), events.end(), "journal host_failed a");
  ASSERT_NE(recorded, events.end());
  EXPECT_LT(recorded, std::find(events.begin(), events.end(), "failed a: a: refused"));
}

TEST(Scheduler, CancelSendsTermThenKillAfterGrace) {
  Harness h(make_fleet({{"a", {"0", "1"}}}),
            SchedulerOptions{.kill_grace = std::chrono::seconds(5)});
  h.executors[0]->outcome = [](const std::string&) {
    return FakeExecutor::Outcome{.steps = 1'000'000};
  };
  h.source.add("x");
  h.source.add("y");
  h.scheduler->start();
  h.tick();
  h.tick();  // their processes start
  ASSERT_EQ(h.scheduler->running_count(), 2u);
  h.scheduler->cancel_running(h.now);
  ASSERT_EQ(h.executors[0]->signals.size(), 2u);
  EXPECT_EQ(h.executors[0]->signals[0].second, SIGTERM);
  h.tick(std::chrono::seconds(1));
  EXPECT_EQ(h.executors[0]->signals.size(), 2u);  // not yet
  EXPECT_EQ(*h.scheduler->deadline(), h.now + std::chrono::seconds(4));
  h.tick(std::chrono::seconds(5));
  ASSERT_EQ(h.executors[0]->signals.size(), 4u);
  EXPECT_EQ(h.executors[0]->signals[3].second, SIGKILL);
  EXPECT_EQ(h.run(), 130);
}

TEST(Scheduler, DaemonWaitsForNewJobs) {
  Harness h(make_fleet({{"a", {"0"}}}), SchedulerOptions{.daemon = true});
  h.scheduler->start();
  for (int i = 0; i < 20; ++i) h.tick();
  EXPECT_FALSE(h.scheduler->finished());
  int takes = h.source.takes;
  for (int i = 0; i < 20; ++i) h.tick();
  EXPECT_EQ(h.source.takes, takes) << "an idle daemon must not re-read an unchanged queue";
  h.source.add("late");
  h.scheduler->queue_changed();
  h.tick();
  h.tick();
  EXPECT_EQ(h.all_jobs_sent(), (std::vector<std::string>{"late"}));
  EXPECT_FALSE(h.scheduler->finished());
}

TEST(Scheduler, UnavailableQueueIsReportedOnceAndRetried) {
  Harness h(make_fleet({{"a", {"0"}}}),
            SchedulerOptions{.retry_interval = std::chrono::seconds(1)});
  h.source.unavailable = QueueUnavailable{"queue.yaml:3:1: bad indentation", true};
  h.source.add("j");
  h.scheduler->start();
  for (int i = 0; i < 5; ++i) h.tick(std::chrono::milliseconds(300));
  ASSERT_EQ(h.observer.notices.size(), 1u);
  EXPECT_NE(h.observer.notices[0].find("queue.yaml:3:1"), std::string::npos);
  EXPECT_GE(h.source.takes, 2);
  EXPECT_TRUE(h.all_jobs_sent().empty());
  h.source.unavailable.reset();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(h.all_jobs_sent(), (std::vector<std::string>{"j"}));
}

TEST(Scheduler, RendersHostAndJobVariables) {
  Harness h(make_fleet({{"node1", {"5", "6"}}}));
  h.source.add("run <<model>> on <<hostname>> gpu <<gpu>> slots <<slots>>", 2, {{"model", "m"}});
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(h.all_jobs_sent(), (std::vector<std::string>{"run m on node1 gpu 5,6 slots 0,1"}));
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST(Scheduler, InsideAnAllocationOnlyJobsThatWouldEndBeforeItDoesStart) {
  SchedulerOptions options;
  options.take_until = Clock::time_point{} + std::chrono::milliseconds(125);
  testing::FakeRun h(testing::make_fleet({{"a", {"0"}}}), options);
  h.executors[0]->outcome = [](const std::string&) {
    return testing::FakeExecutor::Outcome{.steps = 5};
  };
  for (int i = 0; i < 5; ++i) h.source.add("job" + std::to_string(i));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  // Each takes 40 ms: after the second, one more would end past 125 ms.
  EXPECT_EQ(h.all_jobs_sent(), (std::vector<std::string>{"job0", "job1"}));
  EXPECT_EQ(h.source.jobs.size(), 3u);
  ASSERT_FALSE(h.observer.notices.empty());
  EXPECT_NE(h.observer.notices.back().find("sooner than another job would end (2 succeeded so "
                                           "far); no more jobs start, and the queue keeps the rest"),
            std::string::npos)
      << h.observer.notices.back();
}

}  // namespace
}  // namespace runner
