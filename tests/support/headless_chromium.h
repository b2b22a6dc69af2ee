// Debian's Chromium, headless, on a page a test wrote: its DOM once the
// page's scripts ran (--dump-dom), or a screenshot. Nothing is fetched.
#pragma once

#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner::testing {

// /usr/bin/chromium (or chromium-browser), or "" when there is none.
std::string find_chromium();

// Skips the test without Chromium, or fails it under CI=true.
#define RUNNER_REQUIRE_CHROMIUM(chromium)                                          \
  do {                                                                             \
    if ((chromium).empty()) {                                                      \
      const char* ci = std::getenv("CI");                                          \
      if (ci && std::string(ci) == "true")                                         \
        FAIL() << "chromium is missing; scripts/setup.sh --tests installs it";     \
      GTEST_SKIP() << "chromium is not installed";                                 \
    }                                                                              \
  } while (false)

// Runs `chromium` headless on `url` with `extra` flags, its profile in `dir`.
ProcessResult headless_chromium(const std::string& chromium, const TempDir& dir,
                                const std::vector<std::string>& extra, const std::string& url);

}  // namespace runner::testing
