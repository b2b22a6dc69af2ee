#include "runner/config/duration.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

using std::chrono::milliseconds;

TEST(Duration, UnitsAndCombinations) {
  EXPECT_EQ(parse_duration("90s"), milliseconds(90'000));
  EXPECT_EQ(parse_duration("90"), milliseconds(90'000));
  EXPECT_EQ(parse_duration("2h"), milliseconds(7'200'000));
  EXPECT_EQ(parse_duration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(parse_duration("500ms"), milliseconds(500));
  EXPECT_EQ(parse_duration("1d"), milliseconds(86'400'000));
  EXPECT_EQ(parse_duration("5min"), milliseconds(300'000));
  EXPECT_EQ(parse_duration(" 3m "), milliseconds(180'000));
  EXPECT_EQ(parse_duration("0s"), milliseconds(0));
}

TEST(Duration, RejectsWhatIsNotADuration) {
  for (const char* bad :
       {"", "s", "-5s", "5x", "1.5h", "5 s", "abc", "1h30", "10 20", "99999999999999999999s"})
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
}

}  // namespace
}  // namespace runner
