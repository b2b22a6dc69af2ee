#include "runner/core/printable.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

TEST(Printable, PlainTextAndUtf8StayAsTheyAre) {
  EXPECT_EQ(printable("NVIDIA A100-SXM4-80GB (UUID: GPU-1) 100% \\o/"),
            "NVIDIA A100-SXM4-80GB (UUID: GPU-1) 100% \\o/");
  EXPECT_EQ(printable("Grafikkarte für 3°C – 日本語 🚀"), "Grafikkarte für 3°C – 日本語 🚀");
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, ControlCharactersAreEscapes) {
  EXPECT_EQ(printable("A100\r- evil.example.org"), "A100\\r- evil.example.org");
  EXPECT_EQ(printable("a\nb\tc"), "a\\nb\\tc");
  EXPECT_EQ(printable("\x1b[2J\x1b]0;title\x07"), "\\x1b[2J\\x1b]0;title\\x07");
  EXPECT_EQ(printable(std::string_view("nul\0del\x7f", 8)), "nul\\x00del\\x7f");
}

TEST(Printable, UnicodeBreaksC1ControlsAndDirectionOverridesAreEscapes) {
  EXPECT_EQ(printable("a\u2028b\u2029c"), "a\\u2028b\\u2029c");
  EXPECT_EQ(printable("next\u0085line \u009b31m"), "next\\u0085line \\u009b31m");
  EXPECT_EQ(printable("gpu\u202Egro.live\u202C"), "gpu\\u202egro.live\\u202c");
  EXPECT_EQ(printable("\u2066x\u2069\u200F"), "\\u2066x\\u2069\\u200f");
}

TEST(Printable, BytesThatAreNotUtf8AreEscapes) {
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("cut \xe6\x97"), "cut \\xe6\\x97");
  EXPECT_EQ(printable("overlong \xc0\xaf \xe0\x80\xaf"), "overlong \\xc0\\xaf \\xe0\\x80\\xaf");
  EXPECT_EQ(printable("surrogate \xed\xa0\x80"), "surrogate \\xed\\xa0\\x80");
  EXPECT_EQ(printable("beyond \xf4\x90\x80\x80"), "beyond \\xf4\\x90\\x80\\x80");
}

TEST(Printable, PrintingTwiceChangesNothingMore) {
  std::string once = printable("a\r\x1b\xff\u2028\\n");
  EXPECT_EQ(printable(once), once);
  for (char c : once) EXPECT_TRUE(c >= 0x20 && c < 0x7F) << once;
}

}  // namespace
}  // namespace runner
