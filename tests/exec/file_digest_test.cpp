#include "runner/exec/file_digest.h"

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

std::string sha256_of(std::string_view bytes) {
  Sha256 digest;
  digest.add(bytes);
  return digest.hex();
}

TEST(FileDigest, IsTheSha256OfTheBytes) {
  // FIPS 180-2's example, and the empty string's.
  EXPECT_EQ(sha256_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(FileDigest, BytesGivenPieceByPieceDigestAsOne) {
  testing::TempDir dir;
  std::string big = dir.write("big", std::string(200000, 'x'));
  Sha256 digest;
  for (int i = 0; i < 200; ++i) digest.add(std::string(1000, 'x'));
  EXPECT_EQ(digest.hex() + "\n", testing::sh_output("sha256sum '" + big + "' | cut -c1-64"));
}

}  // namespace
}  // namespace runner
