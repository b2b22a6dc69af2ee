// A job's commands for where it is placed, without a run: each rank's
// command rendered for its slots, a job that spans hosts on its layout (a
// provisional one before its master port is chosen), and a template that
// cannot be rendered said once.
#include "runner/sched/command_renderer.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"
#include "support/no_executor_events.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::FakeBackend;
using testing::FakeExecutor;
using testing::make_fleet;
using testing::RecordingObserver;

// A renderer over hosts a (slots "a gpu=0", "a gpu=1") and b ("b gpu=5"),
// reached as 10.0.0.1 and 10.0.0.2.
struct Renderer {
  Renderer() {
    std::vector<testing::FakeHostOps*> no_host_ops;
    FakeBackend backend(fleet, made, no_host_ops);
    executors = backend.executors(events);
  }

  JobSpec job(std::string command, std::optional<int> nodes = std::nullopt) {
    JobSpec spec;
    spec.command = std::move(command);
    spec.line = 7;
    spec.nodes = nodes;
    return spec;
  }

  Fleet fleet = make_fleet({{"a", {"0", "1"}}, {"b", {"5"}}});
  testing::NoExecutorEvents events;
  std::vector<FakeExecutor*> made;
  std::vector<std::unique_ptr<Executor>> executors;
  RecordingObserver observer;
  testing::FakeRunLog run_log{observer.events};
  RunningJobs running;
  Services services{fleet, running, run_log, observer};
  Gangs gangs{fleet, executors, "run-9"};
  QueueLook look{observer, 5s};
  CommandRenderer renderer{fleet, services, gangs, look};
};

TEST(CommandRenderer, EachRankGetsItsCommandForItsSlots) {
  Renderer r;
  auto commands = r.renderer.render(r.job("train gpu=<<gpu>> on <<hostname>>"), Placement{{1}});
  ASSERT_TRUE(commands);
  EXPECT_EQ(*commands, (std::vector<std::string>{"train gpu=1 on a"}));
  EXPECT_TRUE(r.observer.notices.empty());
}

TEST(CommandRenderer, AJobOfNodesIsRenderedOnAProvisionalLayoutUntilItsPortIsChosen) {
  Renderer r;
  JobSpec job =
      r.job("rank <<rank>> of <<nnodes>> gpu=<<gpu>> at <<master_addr>>:<<master_port>>", 2);
  auto provisional = r.renderer.render(job, Placement{{2}, {0}});
  ASSERT_TRUE(provisional);
  EXPECT_EQ(*provisional, (std::vector<std::string>{"rank 0 of 2 gpu=5 at 10.0.0.2:0",
                                                    "rank 1 of 2 gpu=0 at 10.0.0.2:0"}));
  NodeLayout layout = r.gangs.provisional_layout(Placement{{2}, {0}});
  layout.master_port = 29500;
  auto chosen = r.renderer.render(job, Placement{{2}, {0}}, &layout);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->back(), "rank 1 of 2 gpu=0 at 10.0.0.2:29500");
}

TEST(CommandRenderer, AVariableNoOneDefinesIsSaidOnceWithTheHostThatLacksIt) {
  Renderer r;
  JobSpec job = r.job("train <<nic>>");
  EXPECT_FALSE(r.renderer.render(job, Placement{{2}}));
  EXPECT_FALSE(r.renderer.render(job, Placement{{2}}));
  ASSERT_EQ(r.observer.notices.size(), 1u);
  EXPECT_NE(r.observer.notices[0].find("the next job (queue line 7): "), std::string::npos);
  EXPECT_NE(r.observer.notices[0].find(" by the job or by host b; edit the queue to go on"),
            std::string::npos);
}

}  // namespace
}  // namespace runner
