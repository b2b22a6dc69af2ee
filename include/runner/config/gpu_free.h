// `gpu_free:` on a hosts.yaml entry: when a slot's GPU counts as free for
// a job to start on it (task-spooler's GPU wait, checked just before each
// start). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runner/core/result.h"

namespace runner {

struct GpuFreeRule {
  std::optional<long> memory_below_mib;  // `memory < 1GiB`: less than this in use
  bool no_processes = false;             // `no-processes`: no compute process on it
  std::string text;                      // as written, for messages
};

// `memory < 1GiB` (MiB, GiB, MB, GB; a bare number is MiB), `no-processes`,
// or both joined by `and`; a message naming the fix otherwise.
Result<GpuFreeRule> parse_gpu_free(std::string_view text);

// What nvidia-smi says one GPU holds now.
struct GpuUsage {
  long memory_used_mib = 0;
  int processes = 0;
};

// Why a GPU with `usage` is not free under `rule` ("3.1 GiB in use, 1
// process"), or nullopt when it is.
std::optional<std::string> gpu_busy_reason(const GpuFreeRule& rule, const GpuUsage& usage);

}  // namespace runner
