// How a job ended, in words.
#include "runner/ui/exit_text.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

JobExit exited(int code) { return JobExit::exited(code); }

JobExit killed(const char* signal) { return JobExit::killed(signal); }

TEST(ExitText, ExitStatusAndSignal) {
  EXPECT_EQ(describe_exit(exited(0)), "exit 0");
  EXPECT_EQ(describe_exit(exited(3)), "exit 3");
  EXPECT_EQ(describe_exit(killed("KILL")), "killed by KILL");
}

TEST(ExitText, AnErrorSaysMoreThanTheSignalOrStatus) {
  JobExit exit = JobExit::failed_because("node01: the server refused to run the command", "TERM");
  EXPECT_EQ(describe_exit(exit), "node01: the server refused to run the command");
}

TEST(ExitText, StoppedByTheRunnerSaysWhyAndHow) {
  JobExit timed_out = killed("TERM");
  timed_out.timed_out = true;
  EXPECT_EQ(describe_exit(timed_out), "timed out (killed by TERM)");
  JobExit cancelled = exited(130);
  cancelled.cancelled = true;
  EXPECT_EQ(describe_exit(cancelled), "cancelled (exit 130)");
}

TEST(ExitText, LostSaysSoWithItsError) {
  JobExit lost = JobExit::lost_because("");
  EXPECT_EQ(describe_exit(lost), "lost");
  lost = JobExit::lost_because("connection to node01 lost");
  EXPECT_EQ(describe_exit(lost), "lost: connection to node01 lost");
  lost.timed_out = true;
  EXPECT_EQ(describe_exit(lost), "lost: connection to node01 lost");
}

}  // namespace
}  // namespace runner
