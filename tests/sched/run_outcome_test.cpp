// How the run ends, on its own: an interrupt stops it and makes its exit
// 130 unless it was stopping already, a second cancels what runs, and a
// failure, a job no host could run or jobs left waiting make it 1.
#include "runner/sched/run_outcome.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

TEST(RunOutcome, ARunWithNothingWrongExitsZero) {
  RunOutcome outcome;
  EXPECT_FALSE(outcome.stopping());
  EXPECT_EQ(outcome.exit_code(false), 0);
}

TEST(RunOutcome, AFailureAJobNoHostCouldRunOrJobsLeftWaitingExitOne) {
  RunOutcome failed;
  failed.failed();
  EXPECT_EQ(failed.exit_code(false), 1);
  RunOutcome failed_in_a_step;
  failed_in_a_step.failed(2);
  EXPECT_EQ(failed_in_a_step.exit_code(false), 1);
  RunOutcome unrunnable;
  unrunnable.mark_unrunnable();
  EXPECT_TRUE(unrunnable.unrunnable());
  EXPECT_EQ(unrunnable.exit_code(false), 1);
  EXPECT_EQ(RunOutcome().exit_code(true), 1) << "jobs wait for --resume";
}

TEST(RunOutcome, AnInterruptStopsTheRunAndExits130EvenAfterAFailure) {
  RunOutcome outcome;
  outcome.failed();
  outcome.interrupt();
  EXPECT_TRUE(outcome.stopping());
  EXPECT_FALSE(outcome.cancelling());
  EXPECT_EQ(outcome.exit_code(true), 130);
}

TEST(RunOutcome, AnInterruptOfARunThatStopsAlreadyDoesNotMakeItExit130) {
  RunOutcome outcome;
  outcome.stop();  // a service failed, say
  outcome.interrupt();
  EXPECT_TRUE(outcome.stopping());
  EXPECT_EQ(outcome.exit_code(false), 0);
}

TEST(RunOutcome, ASecondInterruptCancelsWhatRuns) {
  RunOutcome outcome;
  outcome.cancel();
  EXPECT_TRUE(outcome.stopping());
  EXPECT_TRUE(outcome.cancelling());
  EXPECT_EQ(outcome.exit_code(false), 130);
}

}  // namespace
}  // namespace runner
