// How a job of several slots is placed on a host's slots: the queue key
// `allocation_policy` (as in Pegasus' job-slots branch). See
// runner/sched/slot_allocation.h for what each policy does.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace runner {

enum class Allocation { first_fit, buddy };

// "first_fit" (also "first-fit", "firstfit") or "buddy"; nullopt otherwise.
std::optional<Allocation> parse_allocation(std::string_view text);
std::string allocation_name(Allocation allocation);

// Whether a job of `k` slots can ever be placed under `allocation`: buddy
// takes only a power of two.
bool allocation_takes(Allocation allocation, int k);

}  // namespace runner
