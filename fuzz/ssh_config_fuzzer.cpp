// The built-in subset parser of ssh_config, for machines without the ssh
// client: resolve_with_builtin_parser on any text, written to a file of its
// own, for a host with and without an inline user and port.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "runner/exec/ssh/ssh_config.h"

namespace {

// A directory of this process's own, made once, for the file and as the
// home directory; removed at its exit.
char g_dir[] = "/tmp/runner-ssh-config-fuzz-XXXXXX";

const std::string& fuzz_dir() {
  static const std::string dir = [] {
    if (!mkdtemp(g_dir)) std::abort();
    std::atexit([] {
      unlink((std::string(g_dir) + "/config").c_str());
      rmdir(g_dir);
    });
    return std::string(g_dir);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  runner::SshConfigSource source{.config_file = fuzz_dir() + "/config", .home = fuzz_dir()};
  {
    std::ofstream file(source.config_file, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  runner::SshTokenValues local{
      .home = fuzz_dir(), .local_user = "ada", .uid = "1000", .local_host = "desk.lab"};
  [[maybe_unused]] auto node =
      runner::resolve_with_builtin_parser(source, {.host = "node01"}, local);
  [[maybe_unused]] auto gpu = runner::resolve_with_builtin_parser(
      source, {.host = "gpu.lab", .user = "bob", .port = 2222}, local);
  return 0;
}
