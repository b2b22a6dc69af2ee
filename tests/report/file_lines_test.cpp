// A file's lines read a chunk at a time: from the end back, lines longer
// than a chunk or than the limit, and the first and last filled lines.
#include "runner/report/file_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::TempDir;

// Every line from the end back, "<too long>" for one passed over.
std::vector<std::string> lines_from_end(const std::string& path, std::size_t limit) {
  Result<LinesFromEnd> lines = LinesFromEnd::open(path, limit);
  if (!lines) return {"error: " + lines.status().message()};
  std::vector<std::string> out;
  while (true) {
    Result<std::optional<FileLine>> line = lines->previous();
    if (!line) return {"error: " + line.status().message()};
    if (!*line) return out;
    out.push_back((*line)->too_long ? "<too long>" : (*line)->text);
  }
}

TEST(LinesFromEnd, GivesEveryLineFromTheLastBack) {
  TempDir dir;
  EXPECT_EQ(lines_from_end(dir.write("a", "one\ntwo\n\nthree\n"), 100),
            (std::vector<std::string>{"three", "", "two", "one"}));
  EXPECT_EQ(lines_from_end(dir.write("b", "one\ntwo"), 100),
            (std::vector<std::string>{"two", "one"}));
  EXPECT_EQ(lines_from_end(dir.write("c", ""), 100), (std::vector<std::string>{""}));
  EXPECT_EQ(lines_from_end(dir.file("none"), 100).front().rfind("error: ", 0), 0u);
}

TEST(LinesFromEnd, ALineLongerThanAChunkIsWholeAndOneOverTheLimitIsPassedOver) {
  TempDir dir;
  std::string long_line(300 * 1024, 'x');
  std::string path = dir.write("log", "first\n" + long_line + "\nlast\n");
  EXPECT_EQ(lines_from_end(path, 1024 * 1024),
            (std::vector<std::string>{"last", long_line, "first"}));
  EXPECT_EQ(lines_from_end(path, 1000), (std::vector<std::string>{"last", "<too long>", "first"}));
  EXPECT_EQ(lines_from_end(dir.write("one", long_line), 1000),
            (std::vector<std::string>{"<too long>"}));
}

TEST(FilledLines, TheFirstAndTheLastWithTheirPlaceInTheFile) {
  TempDir dir;
  std::string path = dir.write("t.csv", "\n \t\r\nstep,loss\r\n1,2\n2,3\r\n\n  \n");
  Result<std::optional<FileLine>> first = first_filled_line(path, 100);
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->text, "step,loss\r");
  EXPECT_EQ((*first)->offset, 5u);
  Result<std::optional<FileLine>> last = last_filled_line(path, 100);
  ASSERT_TRUE(last && *last);
  EXPECT_EQ((*last)->text, "2,3\r");
  EXPECT_EQ((*last)->offset, 20u);
  Result<std::optional<FileLine>> blank = first_filled_line(dir.write("b", "\n \n"), 100);
  ASSERT_TRUE(blank);
  EXPECT_FALSE(*blank);
  EXPECT_FALSE(first_filled_line(dir.write("wide", std::string(5000, 'x')), 100));
}

}  // namespace
}  // namespace runner
