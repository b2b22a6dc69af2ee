#include "runner/sched/job_pace.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

using namespace std::chrono_literals;

const Clock::time_point t0{};

TEST(JobPace, WithoutAnEndEveryJobHasTime) {
  JobPace pace(std::nullopt);
  pace.succeeded(10h);
  EXPECT_FALSE(pace.out_of_time(t0 + 1000h));
}

TEST(JobPace, BeforeAnyJobSucceededAJobIsTakenWhileTimeIsLeft) {
  JobPace pace(t0 + 60s);
  EXPECT_FALSE(pace.out_of_time(t0 + 59s));
  EXPECT_TRUE(pace.out_of_time(t0 + 60s));
}

TEST(JobPace, AJobIsTakenOnlyIfTheMeanDurationEndsBeforeTheEnd) {
  JobPace pace(t0 + 100s);
  pace.succeeded(10s);
  pace.succeeded(30s);  // mean 20 s
  EXPECT_EQ(pace.succeeded(), 2);
  EXPECT_FALSE(pace.out_of_time(t0 + 80s));
  EXPECT_TRUE(pace.out_of_time(t0 + 81s));
}

}  // namespace
}  // namespace runner
