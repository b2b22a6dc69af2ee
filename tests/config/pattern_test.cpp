// Patterns: the ECMAScript that queue.yaml's patterns are written in, as
// PCRE2 reads it, and the limits that bound a match.
#include "runner/config/pattern.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

// The groups of the first match of `pattern` in `text`, "-" for a group
// that took no part; "no match" or the error.
std::string groups_of(std::string_view pattern, std::string_view text) {
  Result<Pattern> compiled = Pattern::compile(pattern);
  if (!compiled) return "does not compile: " + compiled.status().message();
  Result<std::optional<PatternMatch>> match = compiled->search(text);
  if (!match) return "error: " + match.status().message();
  if (!*match) return "no match";
  std::string out;
  for (const std::optional<std::string>& group : (*match)->groups)
    out += (out.empty() ? "" : "|") + group.value_or("-");
  return out;
}

TEST(Pattern, ReadsWhatECMAScriptPatternsWrite) {
  EXPECT_EQ(groups_of(R"(throughput: ([0-9.]+))", "throughput: 12.5 it/s"), "12.5");
  EXPECT_EQ(groups_of(R"(loss=(\S+)\s)", "step 3 loss=0.25 lr=1"), "0.25");
  EXPECT_EQ(groups_of(R"(acc (\d+)(?= %))", "acc 90 x acc 95 %"), "95");  // lookahead
  EXPECT_EQ(groups_of(R"(acc (\d+)(?! %))", "acc 95 % acc 90"), "9");     // negative
  EXPECT_EQ(groups_of(R"((\w)\1(\d))", "abccd ee5"), "e|5");              // backreference
  EXPECT_EQ(groups_of(R"(t=(.*?)s)", "t=1.5s t=2s"), "1.5");              // lazy
  EXPECT_EQ(groups_of(R"(a(b)?c|(d))", "d"), "-|d");                      // unmatched group
  EXPECT_EQ(groups_of(R"(\u0041(\x42))", "AB"), "B");                     // \u and \x
  EXPECT_EQ(groups_of(R"(([^])$)", "ab\n"), "\n");                        // [^], $ at the end
  EXPECT_EQ(groups_of(R"(up (.+))", "up a\rb"), "a");                     // . stops at \r
  EXPECT_EQ(groups_of("up$", "up\n"), "no match");
}

TEST(Pattern, NamesItsGroupsByTheirNameOrTheirNumber) {
  Result<Pattern> pattern = Pattern::compile(R"((?<host>[^:]+):(\d+)(?:/(?<path>\S*))?)");
  ASSERT_TRUE(pattern) << pattern.status().message();
  EXPECT_EQ(pattern->group_count(), 3u);
  EXPECT_EQ(pattern->group_names(), (std::vector<std::string>{"host", "2", "path"}));
  EXPECT_EQ(pattern->text(), R"((?<host>[^:]+):(\d+)(?:/(?<path>\S*))?)");
  Result<std::optional<PatternMatch>> match = pattern->search("at db:5432/x", 3);
  ASSERT_TRUE(match && *match);
  EXPECT_EQ((*match)->begin, 3u);
  EXPECT_EQ((*match)->end, 12u);
}

TEST(Pattern, SaysWhyAPatternDoesNotCompileAndWhere) {
  EXPECT_EQ(groups_of("loss: ([0-9.]+", ""),
            "does not compile: missing closing parenthesis at offset 14");
  EXPECT_EQ(groups_of("(?<a>x)(?<a>y)", ""),
            "does not compile: two named subpatterns have the same name (PCRE2_DUPNAMES not set) "
            "at offset 12");
}

TEST(Pattern, AMatchThatWouldBacktrackForeverStopsAtItsLimit) {
  // A `y` there, but not after the x's: every way of cutting them is tried.
  EXPECT_EQ(groups_of("((x+x+)+y)", std::string(40, 'x') + "-y"), "error: match limit exceeded");
  EXPECT_EQ(groups_of("((x+x+)+y)", std::string(40, 'x')), "no match");  // no `y` at all
  // A long line is no trouble in itself: no recursion per character.
  std::string line(1 << 20, 'x');
  EXPECT_EQ(groups_of(R"((\S+) items/s)", line + " 5 items/s"), "5");
  EXPECT_EQ(groups_of(R"((.*) done)", line), "no match");
}

}  // namespace
}  // namespace runner
