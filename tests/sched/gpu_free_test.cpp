// `gpu_free:` slots against scripted executors: a job starts on such a
// slot only after a fresh look found its GPU free; busy GPUs are looked at
// again until they are free, other slots run meanwhile, this run's own job
// on the same GPU counts, and a host that cannot be looked at (nvidia-smi
// fails, or hangs past the limit) runs jobs unchecked, with a warning.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "runner/probe/gpu_listing.h"
#include "sched/fakes.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::FakeHostOps;
using testing::make_fleet;
using testing::usage;
using Campaign = testing::FakeRun;
using namespace std::chrono_literals;

bool said(const Campaign& r, const std::string& part) {
  return std::any_of(r.observer.notices.begin(), r.observer.notices.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

// Every slot of `fleet` waits for its GPU to be free by `rule`.
Fleet gated(Fleet fleet, const std::string& rule) {
  for (Slot& slot : fleet.slots) slot.gpu_free = *parse_gpu_free(rule);
  return fleet;
}

// Answers the n-th look at host 0's GPUs (from 0) with `answer(n)`, each
// at the step after it was asked; jobs last `steps` steps.
void script(Campaign& r, std::function<GpuLookAnswer(int)> answer, int steps = 2) {
  auto calls = std::make_shared<int>(0);
  r.host_ops[0]->gpus = [=] { return answer((*calls)++); };
  r.executors[0]->outcome = [=](const std::string& command) {
    if (command == FakeHostOps::k_look_at_gpus) return FakeExecutor::Outcome{.steps = 1};
    return FakeExecutor::Outcome{.steps = steps};
  };
}

// A look at host 0's GPUs ends as `look` says (its exit, its output, how
// many steps it takes); other commands end at once.
void answer_looks(Campaign& r, FakeExecutor::Outcome look) {
  r.executors[0]->outcome = [look](const std::string& command) {
    return command == FakeHostOps::k_look_at_gpus ? look : FakeExecutor::Outcome{};
  };
}

// Two jobs on a host whose GPUs cannot be looked at: both run, and the
// host was asked once, not before every job.
void expect_jobs_run_unchecked(Campaign& r) {
  r.source.add("train");
  r.source.add("again");
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"train", "again"}));
  EXPECT_EQ(r.control_sent(0).size(), 1u) << "asked once";
}

TEST(GpuFree, AJobWaitsWhileAnotherProcessHoldsTheGpuAndStartsOnceItIsFree) {
  Campaign r(gated(make_fleet({{"a", {"0"}}}), "memory < 1GiB"));
  script(r, [](int call) {
    return call < 2 ? usage({{5000, 1}}) : usage({{10, 0}});
  });
  r.source.add("train");
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"train"}));
  EXPECT_EQ(r.control_sent(0).size(), 3u) << "looked twice at a busy GPU, once at a free one";
  EXPECT_TRUE(said(r, "a gpu=0: its GPU is not free (4.9 GiB in use; gpu_free: memory < 1GiB); "
                      "jobs wait for it"));
  EXPECT_TRUE(said(r, "a gpu=0: its GPU is free again"));
}

TEST(GpuFree, OtherSlotsRunWhileOneGpuIsBusy) {
  Campaign r(gated(make_fleet({{"a", {"0", "1"}}}), "no-processes"));
  // GPU 0 has another user's process for the first four looks.
  script(r, [](int call) {
    return usage({{0, call < 4 ? 1 : 0}, {0, 0}});
  }, 4000);  // 40 s: longer than GPU 0 stays busy
  r.source.add("first <<gpu>>");
  r.source.add("second <<gpu>>");
  r.scheduler->start();
  EXPECT_EQ(r.run(20000), 0);
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"first 1", "second 0"}));
  EXPECT_TRUE(said(r, "a gpu=0: its GPU is not free (1 process; gpu_free: no-processes)"));
}

TEST(GpuFree, ThisRunsOwnJobOnTheSameGpuCountsBeforeNvidiaSmiShowsIt) {
  // Two slots on one GPU; nvidia-smi never shows anything on it.
  Campaign r(gated(make_fleet({{"a", {"0", "0"}}}), "no-processes"));
  script(r, [](int) { return usage({{0, 0}}); }, 20);
  r.source.add("one");
  r.source.add("two");
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  auto at = [&](const std::string& event) {
    return std::find(r.observer.events.begin(), r.observer.events.end(), event) -
           r.observer.events.begin();
  };
  EXPECT_LT(at("end a gpu=0 one"), at("start a gpu=0 two")) << "never both at once";
}

TEST(GpuFree, AHostThatCannotBeLookedAtRunsJobsUncheckedAndSaysSo) {
  Campaign r(gated(make_fleet({{"a", {"0"}}}), "memory < 1GiB"));
  answer_looks(r, {.exit = JobExit::exited(127), .steps = 1, .output = "sh: nvidia-smi: not found\n"});
  expect_jobs_run_unchecked(r);
  EXPECT_TRUE(said(r, "a: cannot tell whether its GPUs are free for `gpu_free`"));
}

TEST(GpuFree, AHostWhoseNvidiaSmiHangsIsGivenUpOnAtTheLimitAndRunsJobsUnchecked) {
  Campaign r(gated(make_fleet({{"a", {"0"}}}), "memory < 1GiB"));
  answer_looks(r, {.steps = 1'000'000});
  expect_jobs_run_unchecked(r);
  EXPECT_TRUE(said(r,
                   "a: cannot tell whether its GPUs are free for `gpu_free` (nvidia-smi did "
                   "not answer within 30.0s); its jobs start without waiting"));
  // The look was killed, and not before its limit.
  const auto& signals = r.executors[0]->signals;
  ASSERT_EQ(signals.size(), 1u);
  ASSERT_GE(r.executors[0]->started.size(), 1u);
  EXPECT_EQ(signals[0], (std::pair<JobId, int>{r.executors[0]->started[0].first, SIGKILL}));
  EXPECT_EQ(r.host_ops[0]->stopped, std::vector<TaskId>{r.executors[0]->started[0].first});
  EXPECT_GE(r.now - Clock::time_point{}, k_gpu_usage_limit);
}

TEST(GpuFree, TheLimitOfALookIsTheSchedulersOption) {
  SchedulerOptions options;
  options.gpu_check_limit = 500ms;
  Campaign r(gated(make_fleet({{"a", {"0"}}}), "memory < 1GiB"), options);
  answer_looks(r, {.steps = 1'000'000});
  r.source.add("train");
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  EXPECT_TRUE(said(r, "(nvidia-smi did not answer within 500ms)"));
  EXPECT_LT(r.now - Clock::time_point{}, 1s);
}

TEST(GpuFree, EachStartFollowsAFreshLook) {
  Campaign r(gated(make_fleet({{"a", {"0"}}}), "memory < 1GiB"));
  script(r, [](int) { return usage({{0, 0}}); }, 300);
  r.source.add("one");
  r.source.add("two");
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  // `one` runs 300 steps of 10 ms: the look before it is stale by then,
  // and `two` is sent right after a new one.
  const auto& sent = r.executors[0]->started;
  auto two = std::find_if(sent.begin(), sent.end(), [](const auto& s) { return s.second == "two"; });
  ASSERT_NE(two, sent.end());
  ASSERT_GE(two - sent.begin(), 3);
  EXPECT_EQ((two - 1)->second, FakeHostOps::k_look_at_gpus);
  EXPECT_EQ((two - 2)->second, "one");
}

}  // namespace
}  // namespace runner
