#include "support/headless_chromium.h"

#include <unistd.h>

#include <chrono>

namespace runner::testing {

std::string find_chromium() {
  for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (access(candidate, X_OK) == 0) return candidate;
  return "";
}

ProcessResult headless_chromium(const std::string& chromium, const TempDir& dir,
                                const std::vector<std::string>& extra, const std::string& url) {
  ProcessSpec spec;
  spec.args = {chromium,
               "--headless",
               "--no-sandbox",
               "--disable-gpu",
               "--disable-quic",
               "--no-first-run",
               "--disable-sync",
               "--disable-background-networking",
               "--disable-component-update",
               "--user-data-dir=" + dir.file("chromium-profile")};
  for (const std::string& flag : extra) spec.args.push_back(flag);
  spec.args.push_back(url);
  spec.cwd = dir.path();
  spec.timeout = std::chrono::seconds(90);
  return run_process(spec);
}

}  // namespace runner::testing
