// Which job holds each slot of the fleet. A slot is free, reserved (promised
// to a job that is being taken from the queue and is not a job yet), or
// held by a job from its launch (or, for a job across nodes, its staging)
// to its end. The scheduler's one record of it: nothing else writes it.
#pragma once

#include <span>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/sched/job.h"

namespace runner {

class SlotBook {
 public:
  explicit SlotBook(const Fleet& fleet) : m_fleet(fleet), m_holder(fleet.slots.size(), k_free) {}

  // Neither held nor reserved.
  bool free(int slot) const { return m_holder[slot] == k_free; }
  // The job that holds `slot`; 0 when it is free or only reserved.
  JobId holder(int slot) const { return m_holder[slot] == k_reserved ? k_free : m_holder[slot]; }
  int size() const { return static_cast<int>(m_holder.size()); }

  void reserve(std::span<const int> slots) { set(slots, k_reserved); }
  void hold(std::span<const int> slots, JobId job) { set(slots, job); }
  void release(std::span<const int> slots) { set(slots, k_free); }
  // The same, for each node's slots of a placement.
  void reserve(const Placement& placement);
  void hold(const Placement& placement, JobId job);
  void release(const Placement& placement);

  // A job holds the GPU of `slot` (its `gpu` parameter) through another
  // slot of its host.
  bool gpu_held_through_another_slot(int slot) const;

 private:
  static constexpr JobId k_free = 0;
  static constexpr JobId k_reserved = ~JobId{0};
  void set(std::span<const int> slots, JobId value) {
    for (int slot : slots) m_holder[slot] = value;
  }

  const Fleet& m_fleet;
  std::vector<JobId> m_holder;
};

}  // namespace runner
