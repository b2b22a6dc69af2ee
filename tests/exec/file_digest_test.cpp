#include "runner/exec/file_digest.h"

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

TEST(FileDigest, IsTheSha256OfTheFilesBytes) {
  testing::TempDir dir;
  // FIPS 180-2's example, and the empty file's.
  EXPECT_EQ(*file_sha256(dir.write("abc", "abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(*file_sha256(dir.write("empty", "")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // More than one read's worth.
  std::string big = dir.write("big", std::string(200000, 'x'));
  EXPECT_EQ(*file_sha256(big) + "\n", testing::sh_output("sha256sum '" + big + "' | cut -c1-64"));
}

TEST(FileDigest, AFileThatCannotBeReadSaysWhich) {
  Result<std::string> missing = file_sha256("/nonexistent/file");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("/nonexistent/file"), std::string::npos);
}

}  // namespace
}  // namespace runner
