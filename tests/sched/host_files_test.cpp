// Files between the runner and its hosts, as the scheduler asks for them
// through HostOps (answered with scripted typed values): a job's outputs
// brought back and, with outputs_cleanup, removed from its host; a
// broadcast step's push to every host before its command.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "runner/state/state_dir.h"
#include "sched/fakes.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::FakeRun;
using testing::make_fleet;

bool said(const FakeRun& r, const std::string& part) {
  return std::any_of(r.observer.notices.begin(), r.observer.notices.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

bool happened(const FakeRun& r, const std::string& event) {
  return std::find(r.observer.events.begin(), r.observer.events.end(), event) !=
         r.observer.events.end();
}

// A run, started, of one job on host a whose `outputs:` are `outputs`,
// with outputs_cleanup; its host answers that `came_back` came back.
std::unique_ptr<FakeRun> outputs_run(const std::string& outputs,
                                     std::vector<OutputFile> came_back) {
  auto r = std::make_unique<FakeRun>(make_fleet({{"a", {"0"}}}),
                                     SchedulerOptions{.outputs_dir = "/outputs"});
  JobSpec job{"train", {}, 1, 1};
  job.outputs = outputs;
  job.outputs_cleanup = true;
  r->source.jobs.push_back(job);
  r->host_ops[0]->fetched.files = std::move(came_back);
  r->scheduler->start();
  return r;
}

TEST(HostFiles, AJobsOutputsComeBackFromItsHostAndWithCleanupExactlyThoseAreRemoved) {
  auto run = outputs_run("results/*.json gpu<<gpu>>.log",
                         {{"results/a.json", 10, "aa"}, {"gpu0.log", 20, "bb"}});
  FakeRun& r = *run;
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.host_ops[0]->fetches, std::vector<std::string>{"results/*.json gpu0.log"});
  EXPECT_TRUE(happened(r, "journal outputs #1"));
  EXPECT_TRUE(
      happened(r, "outputs #1 into " + attempt_outputs_dir("/outputs", 1, 1) + ": 2 files"));
  // What came back is removed, by its names as they came, and nothing else.
  EXPECT_EQ(r.host_ops[0]->removals,
            (std::vector<std::vector<std::string>>{{"results/a.json", "gpu0.log"}}));
}

TEST(HostFiles, OutputsNamedByAnAbsolutePathComeBackButAreNotRemoved) {
  auto run = outputs_run("/scratch/out.bin", {{"scratch/out.bin", 10, "aa"}});
  FakeRun& r = *run;
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.host_ops[0]->fetches, std::vector<std::string>{"/scratch/out.bin"});
  EXPECT_TRUE(r.host_ops[0]->removals.empty());
  EXPECT_TRUE(said(r, "#1: outputs_cleanup leaves files named by an absolute path on the host"));
}

TEST(HostFiles, AStepsCommandRunsOnlyOnTheHostsItsPushReached) {
  testing::TempDir local;
  FakeRun r(make_fleet({{"a", {"0"}}, {"b", {"0"}}}), SchedulerOptions{.mode = Mode::broadcast});
  JobSpec step{"train <<hostname>>", {}, 1, 1};
  step.push = local.write("data/x.bin", "x");
  step.push_to = "in";
  r.source.jobs.push_back(step);
  r.host_ops[1]->put.error = "no space left on the device";
  r.scheduler->start();
  EXPECT_EQ(r.run(), 1) << "a host without the files is a failure";
  for (std::size_t host = 0; host < 2; ++host)
    EXPECT_EQ(r.host_ops[host]->puts, std::vector<std::string>{"in"}) << host;
  EXPECT_TRUE(said(r, "push to b failed: no space left on the device"));
  EXPECT_EQ(r.jobs_sent(0), std::vector<std::string>{"train a"});
  EXPECT_TRUE(r.jobs_sent(1).empty());
}

TEST(HostFiles, ASecondInterruptStopsThePushUnderWay) {
  testing::TempDir local;
  FakeRun r(make_fleet({{"a", {"0"}}}), SchedulerOptions{.mode = Mode::broadcast});
  r.executors[0]->outcome = [](const std::string&) { return FakeExecutor::Outcome{.steps = 50}; };
  JobSpec step{"train", {}, 1, 1};
  step.push = local.write("x.bin", "x");
  r.source.jobs.push_back(step);
  r.scheduler->start();
  for (int i = 0; i < 3; ++i) r.tick();
  ASSERT_EQ(r.host_ops[0]->puts.size(), 1u);
  EXPECT_EQ(r.host_ops[0]->transfer_stops, 0);
  r.scheduler->cancel_running(r.now);
  EXPECT_EQ(r.host_ops[0]->transfer_stops, 1);
}

}  // namespace
}  // namespace runner
