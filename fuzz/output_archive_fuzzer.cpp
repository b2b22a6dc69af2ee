// What a host sends back for a job's outputs: the input as a tar stream,
// unpacked by unpack_outputs into a folder of this process's own (emptied
// after each input), and as a member's name given to output_entry_path.
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "runner/exec/output_entry.h"
#include "runner/exec/output_unpacker.h"

namespace {

// A folder of this process's own, made once, removed at its exit.
char g_folder[] = "/tmp/runner-outputs-fuzz-XXXXXX";

const std::string& folder() {
  static const std::string path = [] {
    if (!mkdtemp(g_folder)) abort();
    atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(g_folder, ignored);
    });
    return std::string(g_folder);
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  static_cast<void>(runner::output_entry_path(bytes));
  runner::unpack_outputs(bytes, folder());
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(folder(), ignored))
    std::filesystem::remove_all(entry.path(), ignored);
  return 0;
}
