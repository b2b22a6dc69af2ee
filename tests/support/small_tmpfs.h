// A small tmpfs mounted for one test: a real file system that a test can
// fill up and free again (the tests run as root). Unmounted when the object
// goes away, whatever the test did.
#pragma once

#include <string>

namespace runner::testing {

class SmallTmpfs {
 public:
  // Mounts a tmpfs of `size` ("2m") on `dir`, creating it. See mounted().
  SmallTmpfs(std::string dir, const std::string& size);
  ~SmallTmpfs();
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool mounted() const { return m_mounted; }
  // Why the mount failed.
  const std::string& error() const { return m_error; }
  const std::string& path() const { return m_dir; }

  // Writes one file (`.filler`) until no byte more fits; true when the file
  // system is full.
  bool fill();
  // Removes that file.
  void free_space();

 private:
  std::string m_dir;
  bool m_mounted = false;
  std::string m_error;
};

// Whether a test must fail rather than skip when it cannot set up what it
// needs (CI=true).
bool setup_required();

// Mounts `fs`, or says why not: a failure under CI=true, a skip otherwise.
#define RUNNER_REQUIRE_TMPFS(fs)                                                  \
  do {                                                                            \
    if (!(fs).mounted()) {                                                        \
      if (::runner::testing::setup_required()) {                                  \
        FAIL() << "cannot mount a tmpfs (CI=true requires it): " << (fs).error(); \
      }                                                                           \
      GTEST_SKIP() << "cannot mount a tmpfs: " << (fs).error();                   \
    }                                                                             \
  } while (false)

}  // namespace runner::testing
