// A broadcast step on its own: a failed job marks the step until the next
// begins, and a step's push holds its commands until every host answered,
// then leaves them only where the files arrived.
#include "runner/sched/broadcast_steps.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::make_fleet;

// Slots 0 and 1 on host a, slot 2 on host b, slot 3 on host c.
BroadcastStep step_on_every_slot(const Fleet& fleet) {
  BroadcastStep step;
  step.spec.command = "train";
  for (int slot = 0; slot < static_cast<int>(fleet.slots.size()); ++slot)
    step.commands.emplace_back(slot, "train on " + fleet.slots[slot].label);
  return step;
}

TEST(BroadcastSteps, AFailedJobMarksTheStepUntilTheNextBegins) {
  Fleet fleet = make_fleet({{"a", {"0"}}});
  BroadcastSteps steps(fleet);
  EXPECT_FALSE(steps.failed());
  steps.job_failed();
  EXPECT_TRUE(steps.failed());
  steps.begin();
  EXPECT_FALSE(steps.failed());
}

TEST(BroadcastSteps, APushHoldsTheStepUntilEveryHostAnswered) {
  Fleet fleet = make_fleet({{"a", {"0", "1"}}, {"b", {"0"}}, {"c", {"0"}}});
  BroadcastSteps steps(fleet);
  steps.push(step_on_every_slot(fleet), 3);
  EXPECT_TRUE(steps.pushing());
  EXPECT_FALSE(steps.pushed(0, true));
  EXPECT_FALSE(steps.pushed(2, true));
  std::optional<BroadcastSteps::Pushed> pushed = steps.pushed(1, true);
  ASSERT_TRUE(pushed);
  EXPECT_FALSE(steps.pushing());
  EXPECT_EQ(pushed->hosts_without_files, 0);
  EXPECT_EQ(pushed->step.commands.size(), 4u);
  EXPECT_EQ(pushed->step.spec.command, "train");
  EXPECT_FALSE(steps.failed());
}

TEST(BroadcastSteps, AHostWithoutTheFilesRunsNothingAndFailsTheStep) {
  Fleet fleet = make_fleet({{"a", {"0", "1"}}, {"b", {"0"}}, {"c", {"0"}}});
  BroadcastSteps steps(fleet);
  steps.push(step_on_every_slot(fleet), 3);
  EXPECT_FALSE(steps.pushed(0, false));
  EXPECT_FALSE(steps.pushed(1, true));
  std::optional<BroadcastSteps::Pushed> pushed = steps.pushed(2, true);
  ASSERT_TRUE(pushed);
  EXPECT_EQ(pushed->hosts_without_files, 1);
  ASSERT_EQ(pushed->step.commands.size(), 2u);
  EXPECT_EQ(pushed->step.commands[0].first, 2);
  EXPECT_EQ(pushed->step.commands[1].first, 3);
  EXPECT_TRUE(steps.failed());
}

}  // namespace
}  // namespace runner
