// The user's config file of defaults: load_user_defaults on any text,
// written to a file of its own. A ConfigError is the answer to a bad file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "../src/cli/user_defaults.h"
#include "runner/config/config_error.h"

namespace {

// A file of this process's own, made once, removed at its exit.
char g_path[] = "/tmp/runner-user-defaults-fuzz-XXXXXX";

const std::string& config_path() {
  static const std::string path = [] {
    int fd = mkstemp(g_path);
    if (fd < 0) std::abort();
    close(fd);
    std::atexit([] { unlink(g_path); });
    return std::string(g_path);
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream file(config_path(), std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    runner::load_user_defaults(config_path());
  } catch (const runner::ConfigError&) {
  }
  return 0;
}
