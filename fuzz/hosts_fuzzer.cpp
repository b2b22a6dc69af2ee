// hosts.yaml: parse_hosts on any text, and the warnings about its slots.
// A failure is the answer to a bad file; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/config/hosts.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  runner::Result<runner::Fleet> fleet = runner::parse_hosts(text, "hosts.yaml");
  if (fleet) runner::repeated_slot_warnings(*fleet, "hosts.yaml");
  return 0;
}
