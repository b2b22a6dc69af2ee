// Jobs taken ahead of need from a long queue: recorded before any of them
// starts, run in queue order before what is left in the queue, and only
// those that surely fit where a job of the same take did.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runner/sched/scheduler.h"
#include "sched/fakes.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::make_fleet;
using Harness = testing::FakeRun;

// The index of the first event that begins with `prefix`, or -1.
long first_event(const std::vector<std::string>& events, const std::string& prefix) {
  auto it = std::find_if(events.begin(), events.end(),
                         [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
  return it == events.end() ? -1 : it - events.begin();
}

TEST(TakeAhead, JobsTakenAheadRunInQueueOrderBeforeLaterEntriesOnceRecorded) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  h.executors[0]->outcome = [](const std::string&) { return FakeExecutor::Outcome{.steps = 3}; };
  h.source.jobs_per_take = 5;
  for (int i = 0; i < 20; ++i) h.source.add("job" + std::to_string(i));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);

  std::vector<std::string> starts;
  for (const auto& e : h.observer.events)
    if (e.rfind("start ", 0) == 0) starts.push_back(e.substr(e.rfind(' ') + 1));
  ASSERT_EQ(starts.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(starts[i], "job" + std::to_string(i));
  // Two placed and three taken ahead per take: the queue is asked once per
  // five jobs, not once per free slot.
  EXPECT_LE(h.source.takes, 8);
  // #3 (job2) was taken ahead with #1 and #2, and recorded before it started.
  const auto& events = h.observer.events;
  long taken = first_event(events, "journal job_taken_ahead #3 job2");
  ASSERT_GE(taken, 0);
  long synced = std::find(events.begin() + taken, events.end(), "journal sync") - events.begin();
  EXPECT_LT(synced, first_event(events, "sent job2"));
  EXPECT_EQ(first_event(events, "journal job_taken_ahead #1 "), -1);
  EXPECT_GE(first_event(events, "journal job_taken_ahead #5 job4"), 0);
}

TEST(TakeAhead, OnlyJobsNoBiggerThanOnePlacedAreTakenAhead) {
  Harness h(make_fleet({{"a", {"0", "1", "2", "3"}}}));
  h.executors[0]->outcome = [](const std::string&) { return FakeExecutor::Outcome{.steps = 3}; };
  h.source.jobs_per_take = 8;
  h.source.add("small");
  h.source.add("pair", 2);
  h.source.add("after");
  h.source.add("big", 4);
  h.source.add("last");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  // The first take placed "small", "pair" and "after", and took nothing
  // ahead: "big" needs more than any of them. The next placed "big", and
  // took "last" ahead.
  EXPECT_EQ(first_event(h.observer.events, "journal job_taken_ahead #4"), -1);
  EXPECT_GE(first_event(h.observer.events, "journal job_taken_ahead #5 last"), 0);
  std::vector<std::string> starts;
  for (const auto& e : h.observer.events)
    if (e.rfind("start ", 0) == 0) starts.push_back(e.substr(e.rfind(' ') + 1));
  EXPECT_EQ(starts, (std::vector<std::string>{"small", "pair", "after", "big", "last"}));
}

TEST(TakeAhead, NothingIsTakenAheadInsideAnAllocation) {
  SchedulerOptions options;
  options.take_until = Clock::time_point{} + std::chrono::hours(1);
  Harness h(make_fleet({{"a", {"0"}}}), options);
  h.source.jobs_per_take = 5;
  for (int i = 0; i < 6; ++i) h.source.add("job" + std::to_string(i));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(first_event(h.observer.events, "journal job_taken_ahead"), -1);
  EXPECT_EQ(h.source.takes, 7);
}

TEST(TakeAhead, JobsTakenAheadThatDidNotRunAreCountedForResume) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.executors[0]->outcome = [](const std::string&) { return FakeExecutor::Outcome{.steps = 50}; };
  h.source.jobs_per_take = 4;
  for (int i = 0; i < 8; ++i) h.source.add("job" + std::to_string(i));
  h.scheduler->start();
  for (int i = 0; i < 5; ++i) h.tick();
  // One placed, three taken ahead; interrupted while the first runs.
  EXPECT_EQ(h.scheduler->taken_ahead_waiting(), 3u);
  h.scheduler->stop_scheduling();
  EXPECT_EQ(h.run(), 130);
  EXPECT_EQ(h.scheduler->taken_ahead_waiting(), 3u);
  EXPECT_EQ(h.all_jobs_sent(), std::vector<std::string>{"job0"});
}

TEST(TakeAhead, AJobTakenAheadIsNoLongerWaitingOnceItStarted) {
  Harness h(make_fleet({{"a", {"0"}}}));
  h.source.jobs_per_take = 3;
  for (int i = 0; i < 3; ++i) h.source.add("job" + std::to_string(i));
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(h.scheduler->taken_ahead_waiting(), 0u);
  EXPECT_GE(first_event(h.observer.events, "journal job_taken_ahead #2 job1"), 0);
}

}  // namespace
}  // namespace runner
