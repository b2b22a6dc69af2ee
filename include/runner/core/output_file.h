// One file a job's `outputs:` brought back: its path under the job's
// outputs folder, its size, and the SHA-256 of its bytes (lowercase hex;
// empty when it could not be read).
#pragma once

#include <cstdint>
#include <string>

namespace runner {

struct OutputFile {
  std::string path;
  std::uint64_t size = 0;
  std::string sha256;
};

}  // namespace runner
