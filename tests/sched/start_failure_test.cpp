// Jobs whose process never started, and when a job's clock starts: a host
// where jobs cannot start is set aside and its jobs run elsewhere; timeouts
// and durations count from the start of the job's own process. Scripted
// executors, injected time.
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
using Campaign = testing::FakeRun;

// What a host with a broken login shell reports for every job.
FakeExecutor::Outcome refused_start(const std::string&) {
  FakeExecutor::Outcome outcome;
  outcome.exit = JobExit::not_started_because(
      "a: the job did not start: the login shell of u ended (status 127)");
  outcome.starts = false;
  return outcome;
}

std::size_t count_containing(const std::vector<std::string>& lines, const std::string& part) {
  return std::count_if(lines.begin(), lines.end(), [&](const std::string& line) {
    return line.find(part) != std::string::npos;
  });
}

TEST(StartFailure, JobsThatDidNotStartRunElsewhereAndTheirHostIsSetAsideOnce) {
  Campaign r(testing::make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}}));
  r.executors[0]->outcome = refused_start;
  for (int i = 0; i < 20; ++i) r.source.add("job" + std::to_string(i));
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  // Host a got its first jobs only; every job then ran once, on b.
  EXPECT_LE(r.jobs_sent(0).size(), 2u);
  auto on_b = r.jobs_sent(1);
  ASSERT_EQ(on_b.size(), 20u);
  std::sort(on_b.begin(), on_b.end());
  EXPECT_EQ(std::unique(on_b.begin(), on_b.end()), on_b.end());
  // Named once, with the executor's reason.
  EXPECT_EQ(count_containing(r.observer.events, "failed a: "), 1u);
  EXPECT_EQ(count_containing(r.observer.events, "the login shell of u ended (status 127)"), 1u);
  EXPECT_EQ(count_containing(r.observer.events, "set aside"), 1u);
  for (const auto& [job, exit] : r.observer.finished) {
    if (exit.not_started()) {
      // Put back: neither a failure nor an attempt, and no time ran.
      EXPECT_TRUE(job.will_rerun());
      EXPECT_EQ(job.attempt, 1);
    } else {
      EXPECT_TRUE(exit.succeeded());
      EXPECT_EQ(job.attempt, 1);
    }
  }
}

TEST(StartFailure, WhenEveryHostIsSetAsideTheRunEndsWithTheJobsWaiting) {
  Campaign r(testing::make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  for (auto& t : r.executors) t->outcome = refused_start;
  for (int i = 0; i < 5; ++i) r.source.add("job" + std::to_string(i));
  r.scheduler->start();
  EXPECT_EQ(r.run(), 1);
  // Each host refused one job; no job counted as failed or tried again.
  EXPECT_EQ(r.jobs_sent(0).size() + r.jobs_sent(1).size(), 2u);
  EXPECT_EQ(r.source.jobs.size(), 3u);  // never taken: still in the queue
  for (const auto& [job, exit] : r.observer.finished) EXPECT_TRUE(job.will_rerun());
  EXPECT_EQ(count_containing(r.observer.notices, "no usable host is left"), 1u);
  EXPECT_EQ(count_containing(r.observer.events, "set aside"), 2u);
}

TEST(StartFailure, ATimeoutCountsFromTheStartOfTheJobsProcess) {
  // The login shell takes 3 s to start the job; the job then takes 1 s.
  Campaign r(testing::make_fleet({{"a", {"0"}}}));
  r.executors[0]->outcome = [](const std::string&) {
    return FakeExecutor::Outcome{.exit = JobExit::exited(0), .steps = 2, .start_steps = 3};
  };
  r.source.jobs.push_back(JobSpec{"echo hi", {}, 1, 1, 2s, "2s"});
  r.scheduler->start();
  for (int i = 0; i < 20 && !r.scheduler->finished(); ++i) r.tick(1s);
  ASSERT_TRUE(r.scheduler->finished());
  EXPECT_EQ(r.scheduler->exit_code(), 0);
  ASSERT_EQ(r.observer.finished.size(), 1u);
  EXPECT_FALSE(r.observer.finished[0].second.timed_out);
  EXPECT_TRUE(r.executors[0]->signals.empty());
  // Its duration is its process's: 1 s, not the 4 s since it was sent.
  ASSERT_GE(r.observer.durations.size(), 1u);
  EXPECT_EQ(r.observer.durations[0], 1s);
}

TEST(StartFailure, AJobThatNeverReportsItsStartIsStoppedAfterItsTimeoutAndTheAllowance) {
  Campaign r(testing::make_fleet({{"a", {"0"}}}),
             SchedulerOptions{.kill_grace = 5s, .start_allowance = 10s});
  r.executors[0]->outcome = [](const std::string&) {
    return FakeExecutor::Outcome{.steps = 1'000'000, .start_steps = 1'000'000};
  };
  r.source.jobs.push_back(JobSpec{"echo hi", {}, 1, 1, 2s, "2s"});
  r.scheduler->start();
  r.tick();
  auto sent_at = r.now;
  ASSERT_EQ(r.scheduler->running_count(), 1u);
  EXPECT_EQ(*r.scheduler->deadline(), sent_at + 12s);
  r.now = sent_at + 12s;
  r.tick(0s);
  auto& signals = r.executors[0]->signals;
  ASSERT_EQ(signals.size(), 1u);
  EXPECT_EQ(signals[0].second, SIGTERM);
  EXPECT_EQ(count_containing(r.observer.notices, "did not start within 2s plus 10s"), 1u);
  EXPECT_EQ(r.run(), 1);
  ASSERT_EQ(r.observer.finished.size(), 1u);
  EXPECT_TRUE(r.observer.finished[0].second.timed_out);
}

}  // namespace
}  // namespace runner
