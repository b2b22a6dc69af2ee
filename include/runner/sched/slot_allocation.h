// Which free slots of one host a job of k slots gets. Pure.
//
// first_fit (the default): the first block of k neighbouring slots that
// starts at a multiple of k (so that a 2-slot job gets an NVLink pair, 2,3
// and not 1,2, when slot 0 is busy); else the first such block that starts
// at an even slot; else the first block anywhere; else the first k free
// slots. buddy (`allocation_policy: buddy`, as in Pegasus' job-slots
// branch): k must be a power of two, and only a block that starts at a
// multiple of k will do.
#pragma once

#include <optional>
#include <vector>

#include "runner/config/allocation.h"

namespace runner {

// Positions in `free` (a host's slots in index order, true where free) of
// the slots a job of `k` slots gets, ascending; nullopt when none will do.
std::optional<std::vector<int>> choose_slots(const std::vector<bool>& free, int k,
                                             Allocation allocation);

}  // namespace runner
