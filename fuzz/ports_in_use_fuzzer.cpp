// /proc/net/tcp and /proc/net/tcp6 as a host prints them: ports_in_use.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/config/tcp_sockets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  runner::ports_in_use(text);
  runner::listening_ports(text);
  return 0;
}
