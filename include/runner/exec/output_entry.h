// What the name of a tar member that a host sent becomes under a job's
// outputs folder: a relative path that stays inside it, or why it cannot.
// Pure; every name that comes back passes here (and a fuzzer may too).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "runner/core/result.h"

namespace runner {

// The most bytes of a path under the folder, and of one name in it.
inline constexpr std::size_t k_output_path_limit = 4096;
inline constexpr std::size_t k_output_name_limit = 255;

// `member`, the bytes of a member's name as they came, as a path under the
// folder: leading '/' dropped (as tar drops them), empty and `.` names
// dropped, the rest joined by one '/'; "" is the folder itself. An error
// saying why when a name is `..` (the path would leave the folder), or the
// path or a name is longer than the limits above.
Result<std::string> output_entry_path(std::string_view member);

}  // namespace runner
