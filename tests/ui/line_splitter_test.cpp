// LineSplitter: terminators, progress bars, partial and oversized lines.
#include "runner/ui/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace runner {
namespace {

using Lines = std::vector<std::string>;

// Feeds each chunk in turn, then finishes.
Lines split(const std::vector<std::string>& chunks, bool finish = true) {
  LineSplitter splitter;
  Lines lines;
  auto collect = [&](std::string_view line) { lines.emplace_back(line); };
  for (const std::string& chunk : chunks) splitter.feed(chunk, collect);
  if (finish) splitter.finish(collect);
  return lines;
}

TEST(LineSplitter, EachTerminatorEndsOneLine) {
  EXPECT_EQ(split({"a\nb\rc\r\nd\n"}), (Lines{"a", "b", "c", "d"}));
}

TEST(LineSplitter, CrLfSplitAcrossFeedsIsOneTerminator) {
  EXPECT_EQ(split({"first\r", "\nsecond\n"}), (Lines{"first", "second"}));
  EXPECT_EQ(split({"first\r", "", "\n", "second\r"}), (Lines{"first", "second"}));
}

TEST(LineSplitter, EmptyLinesAreKept) {
  EXPECT_EQ(split({"a\n\n\nb\n"}), (Lines{"a", "", "", "b"}));
  EXPECT_EQ(split({"\r\n\r\nx\r\n"}), (Lines{"", "", "x"}));
  EXPECT_EQ(split({"\r", "\n", "\r", "\n"}), (Lines{"", ""}));
}

TEST(LineSplitter, BareCarriageReturnOnEmptyLineIsNoLine) {
  EXPECT_EQ(split({"a\n\rb\n"}), (Lines{"a", "b"}));
  EXPECT_EQ(split({"\r\r\rz\n"}), (Lines{"z"}));
  EXPECT_EQ(split({"\r"}), Lines{});
}

TEST(LineSplitter, ProgressBarRedrawsAreLines) {
  std::string tqdm =
      "\r  0%|          | 0/10\r 50%|#####     | 5/10\r100%|##########| 10/10\n"
      "done\n";
  Lines expected = {"  0%|          | 0/10", " 50%|#####     | 5/10", "100%|##########| 10/10",
                    "done"};
  EXPECT_EQ(split({tqdm}), expected);
  // A redraw is a line as soon as its '\r' arrives, before anything follows.
  LineSplitter splitter;
  Lines lines;
  splitter.feed("\r 10%|#", [&](std::string_view line) { lines.emplace_back(line); });
  splitter.feed("    |\r", [&](std::string_view line) { lines.emplace_back(line); });
  EXPECT_EQ(lines, (Lines{" 10%|#    |"}));
}

TEST(LineSplitter, PartialLineWaitsForFinish) {
  EXPECT_EQ(split({"one\ntw", "o"}, false), (Lines{"one"}));
  EXPECT_EQ(split({"one\ntw", "o"}, true), (Lines{"one", "two"}));
  EXPECT_EQ(split({"one\n"}, true), (Lines{"one"}));
}

TEST(LineSplitter, ByteByByteFeedMatchesOneFeed) {
  std::string text = "alpha\r\nbeta\rgamma\n\n\r\r\ndelta\r\rEPS\r\n\rtail";
  std::vector<std::string> bytes;
  for (char c : text) bytes.emplace_back(1, c);
  EXPECT_EQ(split(bytes), split({text}));
  EXPECT_EQ(split({text}), (Lines{"alpha", "beta", "gamma", "", "", "delta", "EPS", "tail"}));
}

TEST(LineSplitter, HugeLineComesOutInBoundedPieces) {
  constexpr std::size_t k_max = LineSplitter::k_max_line;
  std::string line(3 * k_max + 123, 'x');
  for (std::size_t i = 0; i < line.size(); i += 977) line[i] = 'y';
  std::vector<std::string> chunks;
  for (std::size_t i = 0; i < line.size(); i += 1000) chunks.push_back(line.substr(i, 1000));
  chunks.push_back("\nnext\n");

  LineSplitter splitter;
  Lines lines;
  std::size_t most_pending = 0;
  for (const std::string& chunk : chunks) {
    splitter.feed(chunk, [&](std::string_view piece) { lines.emplace_back(piece); });
    most_pending = std::max(most_pending, splitter.pending());
  }
  EXPECT_LE(most_pending, k_max);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].size(), k_max);
  EXPECT_EQ(lines[1].size(), k_max);
  EXPECT_EQ(lines[2].size(), k_max);
  EXPECT_EQ(lines[0] + lines[1] + lines[2] + lines[3], line);
  EXPECT_EQ(lines[4], "next");
}

TEST(LineSplitter, HugeLineInOneFeed) {
  constexpr std::size_t k_max = LineSplitter::k_max_line;
  std::string line(2 * k_max + 5, 'q');
  Lines lines = split({line + "\r\n"});
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "qqqqq");
}

TEST(LineSplitter, LineOfExactlyTheLimitIsOneLine) {
  std::string line(LineSplitter::k_max_line, 'z');
  EXPECT_EQ(split({line.substr(0, 10), line.substr(10), "\n"}), (Lines{line}));
}

}  // namespace
}  // namespace runner
