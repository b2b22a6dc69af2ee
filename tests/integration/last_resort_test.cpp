// The program's last resort: whatever exception reaches it is said, named,
// and exit status 2, rather than std::terminate's abort.
#include "runner/cli/last_resort.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace runner {
namespace {

// What `body` writes to the error stream it is given, and its status.
struct Said {
  int status = -1;
  std::string err;
};

Said run(const std::function<int()>& body) {
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* err = open_memstream(&text, &size);
  Said said;
  said.status = with_last_resort(body, err);
  std::fclose(err);
  said.err.assign(text, size);
  std::free(text);
  return said;
}

TEST(LastResort, TheBodysStatusPassesThrough) {
  Said said = run([] { return 7; });
  EXPECT_EQ(said.status, 7);
  EXPECT_EQ(said.err, "");
}

TEST(LastResort, AStandardExceptionIsNamedAndExitsTwo) {
  Said said = run(
      []() -> int { throw std::system_error(EMFILE, std::generic_category(), "inotify_init1"); });
  EXPECT_EQ(said.status, 2);
  EXPECT_EQ(said.err, "runner: error: unexpected failure: inotify_init1: Too many open files\n");
}

TEST(LastResort, AnExceptionOfAnyTypeExitsTwo) {
  Said said = run([]() -> int { throw 42; });
  EXPECT_EQ(said.status, 2);
  EXPECT_EQ(said.err, "runner: error: unexpected failure: an exception of unknown type\n");
}

}  // namespace
}  // namespace runner
