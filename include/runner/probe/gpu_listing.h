// What nvidia-smi prints, read back: a host's GPUs with their index, model
// and UUID (`nvidia-smi -L`), and what each holds now. Pure.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/detected_hosts.h"
#include "runner/config/gpu_free.h"

namespace runner {

// The command that lists a host's GPUs; it exits 127 where there is no
// nvidia-smi.
inline constexpr const char* k_list_gpus =
    "command -v nvidia-smi >/dev/null 2>&1 || exit 127; exec nvidia-smi -L";

// "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)" lines; others (an index
// that is not a number) are skipped, and a UUID of other characters than
// letters, digits and dashes is left out. The name is as the host said it:
// printable() where it is shown.
std::vector<DetectedGpu> parse_gpu_listing(std::string_view listing);

// The command that says what each GPU of a host holds now: memory in use
// per GPU, a line `---`, then a line per compute process with its GPU's UUID.
inline constexpr const char* k_gpu_usage =
    "nvidia-smi --query-gpu=index,uuid,memory.used --format=csv,noheader,nounits && echo --- && "
    "nvidia-smi --query-compute-apps=gpu_uuid,pid --format=csv,noheader";

// How long k_gpu_usage may take: a host whose nvidia-smi has not answered
// by then (a hung driver) is one that cannot answer.
inline constexpr std::chrono::seconds k_gpu_usage_limit{30};

// k_gpu_usage's output read back, by GPU index ("0"); nullopt when it is
// not that.
std::optional<std::map<std::string, GpuUsage>> parse_gpu_usage(std::string_view text);

}  // namespace runner
