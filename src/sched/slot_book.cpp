// Which job holds each slot (see slot_book.h).
#include "runner/sched/slot_book.h"

namespace runner {

void SlotBook::reserve(const Placement& placement) {
  for (const std::vector<int>& slots : placement) reserve(slots);
}

void SlotBook::hold(const Placement& placement, JobId job) {
  for (const std::vector<int>& slots : placement) hold(slots, job);
}

void SlotBook::release(const Placement& placement) {
  for (const std::vector<int>& slots : placement) release(slots);
}

bool SlotBook::gpu_held_through_another_slot(int slot) const {
  const Slot& where = m_fleet.slots[slot];
  std::optional<std::string> gpu = find_param(where.params, "gpu");
  if (!gpu) return false;
  for (int other : m_fleet.hosts[where.host].slots)
    if (other != slot && !free(other) && find_param(m_fleet.slots[other].params, "gpu") == gpu)
      return true;
  return false;
}

}  // namespace runner
