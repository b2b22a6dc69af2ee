// Long job lines on a terminal: cut to fit beside the slot prefix.
#include "runner/ui/line_wrap.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace runner {
namespace {

std::vector<std::string> wrapped(std::string_view line, std::size_t columns) {
  std::vector<std::string> pieces;
  for (std::string_view piece : wrap_line(line, columns)) pieces.emplace_back(piece);
  return pieces;
}

TEST(LineWrap, CutsIntoPiecesOfAtMostTheColumns) {
  using Pieces = std::vector<std::string>;
  EXPECT_EQ(wrapped("abcdefgh", 3), (Pieces{"abc", "def", "gh"}));
  EXPECT_EQ(wrapped("abcdef", 3), (Pieces{"abc", "def"}));
  EXPECT_EQ(wrapped("ab", 3), (Pieces{"ab"}));
  EXPECT_EQ(wrapped("", 3), (Pieces{""}));
  EXPECT_EQ(wrapped("abcdefgh", 0), (Pieces{"abcdefgh"}));
  // A character of several bytes is one column and never cut.
  EXPECT_EQ(wrapped("héllo wörld", 4), (Pieces{"héll", "o wö", "rld"}));
  EXPECT_EQ(wrapped("日本語です", 2), (Pieces{"日本", "語で", "す"}));
  // An escape sequence takes no column and stays whole.
  EXPECT_EQ(wrapped("\x1b[31mabcd\x1b[0m", 2), (Pieces{"\x1b[31mab", "cd\x1b[0m"}));
  // A tab reaches the next multiple of eight.
  EXPECT_EQ(wrapped("a\tbcdefghij", 10), (Pieces{"a\tbc", "defghij"}));
}

TEST(LineWrap, DisplayColumns) {
  EXPECT_EQ(display_columns("abc"), 3u);
  EXPECT_EQ(display_columns("héllo"), 5u);
  EXPECT_EQ(display_columns("\x1b[1;32mok\x1b[0m"), 2u);
  EXPECT_EQ(display_columns("a\tb"), 9u);
  EXPECT_EQ(display_columns(""), 0u);
}

TEST(LineWrap, PadsToColumnsNotBytes) {
  EXPECT_EQ(pad_to_columns("ab", 4), "ab  ");
  EXPECT_EQ(pad_to_columns("n\xc5\x91" "de", 6), "n\xc5\x91" "de  ") << "5 bytes, 4 columns";
  EXPECT_EQ(pad_to_columns("toolong", 3), "toolong");
  EXPECT_EQ(pad_to_columns("", 2), "  ");
}

}  // namespace
}  // namespace runner
