// A Result holds a value or the failure that says why there is none.
#include "runner/core/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace runner {
namespace {

Result<std::unique_ptr<int>> make(bool works) {
  if (!works) return Status{ErrorKind::connect, "node03: cannot resolve the host name"};
  return std::make_unique<int>(42);
}

TEST(Result, HoldsAValueThatMayBeMovedOut) {
  Result<std::unique_ptr<int>> made = make(true);
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(made.status().ok());
  std::unique_ptr<int> value = std::move(*made);
  EXPECT_EQ(*value, 42);
}

TEST(Result, OrTheFailureWithItsKindAndMessage) {
  Result<std::unique_ptr<int>> made = make(false);
  EXPECT_FALSE(made);
  EXPECT_EQ(made.status().kind(), ErrorKind::connect);
  EXPECT_EQ(made.status().message(), "node03: cannot resolve the host name");
}

TEST(Status, AFailureWithoutAKindHasNoneToDecideBy) {
  Status failed = Status::error("cannot write the journal: No space left on device");
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.kind(), ErrorKind::failed);
  EXPECT_TRUE(Status().ok());
}

TEST(Status, AFailureAtAPlaceNamesTheFileAndLineApartFromItsMessage) {
  Status bad = Status::at("/home/me/.ssh/config", 12, "Bad port '22x'");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.file(), "/home/me/.ssh/config");
  EXPECT_EQ(bad.line(), 12);
  EXPECT_EQ(bad.message(), "Bad port '22x'");
  Result<int> failed = bad;
  EXPECT_EQ(failed.status().file(), "/home/me/.ssh/config");
  EXPECT_EQ(failed.status().line(), 12);
  Status unplaced = Status::error("cannot write the journal");
  EXPECT_EQ(unplaced.file(), "");
  EXPECT_EQ(unplaced.line(), 0);
}

}  // namespace
}  // namespace runner
