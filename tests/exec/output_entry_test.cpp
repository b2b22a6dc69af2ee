#include "runner/exec/output_entry.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

std::string path_of(std::string_view member) {
  Result<std::string> path = output_entry_path(member);
  return path ? *path : "refused: " + path.status().message();
}

TEST(OutputEntry, NamesBecomeRelativePathsInsideTheFolder) {
  EXPECT_EQ(path_of("res/a.csv"), "res/a.csv");
  EXPECT_EQ(path_of("./res//a.csv"), "res/a.csv");
  EXPECT_EQ(path_of("res/"), "res");
  EXPECT_EQ(path_of("/home/u/r.csv"), "home/u/r.csv");
  EXPECT_EQ(path_of("///x"), "x");
  EXPECT_EQ(path_of("./"), "");
  EXPECT_EQ(path_of(""), "");
  // Every other byte is kept as it came.
  EXPECT_EQ(path_of("a\\b/new\nline\t\xe9"), "a\\b/new\nline\t\xe9");
  EXPECT_EQ(path_of("..."), "...");
  EXPECT_EQ(path_of("..a/b.."), "..a/b..");
}

TEST(OutputEntry, DotDotAndOverlongNamesAreRefusedSayingWhy) {
  EXPECT_EQ(path_of(".."), "refused: a `..` in it leaves the job's folder");
  EXPECT_EQ(path_of("../shared/r.csv"), "refused: a `..` in it leaves the job's folder");
  EXPECT_EQ(path_of("a/../b"), "refused: a `..` in it leaves the job's folder");
  EXPECT_EQ(path_of("/.."), "refused: a `..` in it leaves the job's folder");
  EXPECT_EQ(path_of("a/" + std::string(255, 'n')), "a/" + std::string(255, 'n'));
  EXPECT_EQ(path_of("a/" + std::string(256, 'n')),
            "refused: a name of 256 bytes in it (at most 255)");
  EXPECT_EQ(path_of(std::string(4097, '/')), "refused: a name of 4097 bytes (at most 4096)");
}

}  // namespace
}  // namespace runner
