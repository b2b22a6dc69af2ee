// read_whole_file: the whole of a file, or no more than the bytes asked.
#include <gtest/gtest.h>

#include <string>

#include "runner/core/file_system.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

TEST(ReadWholeFile, ReadsAllOrAtMostTheBytesAsked) {
  testing::TempDir dir;
  std::string text(200000, 'x');
  text[199999] = 'y';
  std::string path = dir.write("f", text);
  EXPECT_EQ(read_whole_file(real_file_system(), path), text);
  EXPECT_EQ(read_whole_file(real_file_system(), path, 70000), text.substr(0, 70000));
  EXPECT_EQ(read_whole_file(real_file_system(), path, 0), std::string());
  EXPECT_FALSE(read_whole_file(real_file_system(), dir.file("none")));
}

}  // namespace
}  // namespace runner
