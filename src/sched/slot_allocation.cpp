#include "runner/sched/slot_allocation.h"

namespace runner {

namespace {

// The block of `k` slots from `start`, when all of them are free.
std::optional<std::vector<int>> block_at(const std::vector<bool>& free, int start, int k) {
  if (start + k > static_cast<int>(free.size())) return std::nullopt;
  std::vector<int> block;
  for (int i = start; i < start + k; ++i) {
    if (!free[i]) return std::nullopt;
    block.push_back(i);
  }
  return block;
}

// The first free block of `k` slots whose start is a multiple of `step`.
std::optional<std::vector<int>> first_block(const std::vector<bool>& free, int k, int step) {
  for (int start = 0; start + k <= static_cast<int>(free.size()); start += step)
    if (auto block = block_at(free, start, k)) return block;
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<int>> choose_slots(const std::vector<bool>& free, int k,
                                             Allocation allocation) {
  if (!allocation_takes(allocation, k)) return std::nullopt;
  if (allocation == Allocation::buddy) return first_block(free, k, k);
  for (int step : {k, 2, 1})
    if (auto block = first_block(free, k, step)) return block;
  std::vector<int> any;
  for (int i = 0; i < static_cast<int>(free.size()) && static_cast<int>(any.size()) < k; ++i)
    if (free[i]) any.push_back(i);
  if (static_cast<int>(any.size()) < k) return std::nullopt;
  return any;
}

}  // namespace runner
