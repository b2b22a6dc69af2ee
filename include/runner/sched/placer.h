// Where a job goes: which free slots of which ready hosts (one host, N
// hosts for `nodes: N`, each host for `every: host`), and why a job at the
// head of the queue cannot go anywhere. A view made for one look at what
// the scheduler's components hold now; it changes nothing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/core/clock.h"
#include "runner/sched/gpu_gates.h"
#include "runner/sched/host_table.h"
#include "runner/sched/job.h"
#include "runner/sched/services.h"
#include "runner/sched/slot_book.h"

namespace runner {

class Placer {
 public:
  Placer(const Fleet& fleet, const HostTable& hosts, const SlotBook& slots, const GpuGates& gates,
         const Services& services, Clock::time_point now)
      : m_fleet(fleet),
        m_hosts(hosts),
        m_slots(slots),
        m_gates(gates),
        m_services(services),
        m_now(now) {}

  // Slots for `job`: k free slots of one ready host (avoiding `avoid` if
  // another fits; only on `only_host` if given); for a job of `nodes: N`, k
  // free slots on each of N different ready hosts, or nothing.
  std::optional<Placement> place(const JobSpec& job, int avoid = -1, int only_host = -1) const;
  // `every: host`: a placement on each ready host, once no host is still
  // connecting; nothing until every one of them has the job's slots free.
  std::optional<std::vector<Placement>> place_on_every_host(const JobSpec& job) const;
  // Why the job at the head of the queue cannot be placed, and nothing
  // running will free what it needs: a message for the user.
  std::string why_not_placeable(const JobSpec& job) const;
  // Why the job at the head of the queue waits: why_not_placeable where the
  // ready hosts could never hold it, else what holds their slots (for the
  // debug log).
  std::string why_head_waits(const JobSpec& job) const;
  // A free slot of a ready host may take a job now (its GPU gate is open).
  bool any_slot_open() const;
  // A free slot of a ready host is gated shut, to be looked at again.
  bool gates_waiting() const;

 private:
  std::optional<std::vector<int>> place_on_one_host(const JobSpec& job, int avoid,
                                                    const std::vector<int>& skip_hosts) const;

  const Fleet& m_fleet;
  const HostTable& m_hosts;
  const SlotBook& m_slots;
  const GpuGates& m_gates;
  const Services& m_services;
  Clock::time_point m_now;
};

}  // namespace runner
