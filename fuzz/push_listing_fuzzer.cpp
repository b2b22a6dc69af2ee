// A host's listing of the files `runner push` would send: parse_host_listing,
// then what is left to send against it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "runner/exec/push_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::map<std::string, runner::HostFile> there = runner::parse_host_listing(text);
  std::vector<runner::PushFile> files = {
      {.root = "/src", .path = "data/a.bin", .size = 12, .mtime = 1700000000, .mode = 0644}};
  runner::files_to_send(files, there);
  return 0;
}
