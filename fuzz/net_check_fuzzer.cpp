// What `runner check --net`'s scripts print: parse_host_survey (tools,
// interfaces, ports in use, in `== ` sections) and parse_probe_answers.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/probe/net_check_scripts.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  runner::parse_host_survey(text);
  runner::parse_probe_answers(text);
  return 0;
}
