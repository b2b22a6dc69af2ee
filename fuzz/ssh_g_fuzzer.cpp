// What `ssh -G HOST` prints: parse_ssh_g_output on any text, for a query
// with and without an inline user and port.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/exec/ssh/ssh_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  runner::SshTokenValues local{
      .home = "/home/ada", .local_user = "ada", .uid = "1000", .local_host = "desk.lab"};
  [[maybe_unused]] auto node = runner::parse_ssh_g_output(text, {.host = "node01"}, local);
  [[maybe_unused]] auto gpu =
      runner::parse_ssh_g_output(text, {.host = "gpu", .user = "bob", .port = 2222}, local);
  return 0;
}
