// What `nvidia-smi -L` prints, read back: a host's GPUs with their index,
// model and UUID. Pure.
#pragma once

#include <string_view>
#include <vector>

#include "runner/config/detected_hosts.h"

namespace runner {

// The command that lists a host's GPUs; it exits 127 where there is no
// nvidia-smi.
inline constexpr const char* k_list_gpus =
    "command -v nvidia-smi >/dev/null 2>&1 || exit 127; exec nvidia-smi -L";

// "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)" lines; others are skipped.
std::vector<DetectedGpu> parse_gpu_listing(std::string_view listing);

}  // namespace runner
