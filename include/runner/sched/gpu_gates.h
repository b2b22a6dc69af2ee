// The GPU gates of `gpu_free:` slots (hosts.yaml): such a slot takes a job
// only on a fresh look at what its GPU holds. This holds each gated slot's
// last look and each host's look under way, and answers when a host is to
// be looked at and whether a slot may take a job; the scheduler runs the
// looks (k_gpu_usage) and says what this returns. A GPU that a job of this
// run holds through another slot is not free either, whatever nvidia-smi
// says yet. Queue mode only: broadcast steps run on every slot. Pure: time
// is what it is given.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/gpu_free.h"
#include "runner/config/hosts.h"
#include "runner/core/clock.h"
#include "runner/sched/job_end.h"
#include "runner/sched/slot_book.h"

namespace runner {

class GpuGates {
 public:
  // The gates of `fleet`'s `gpu_free` slots, whose holders `slots` knows;
  // in broadcast mode every gate is open.
  GpuGates(const Fleet& fleet, const SlotBook& slots, Mode mode);

  // `slot` may take a job at `now`: it is not gated, its host cannot be
  // looked at, or a fresh look found its GPU free and no job of this run
  // holds that GPU through another slot.
  bool open(int slot, Clock::time_point now) const;
  // A free slot of `host` is shut: it will be looked at again.
  bool waiting(int host, Clock::time_point now) const;
  // When `host`'s free gated slots are to be looked at; nullopt when none
  // is, a look is under way, or its GPUs cannot be looked at.
  std::optional<Clock::time_point> due(int host) const;

  // A look at `host` begins; it is given up at `give_up_at`.
  void look_begins(int host, Clock::time_point give_up_at);
  // The command that looks, to kill if it hangs (unless the look ended
  // already, as a command may end at once).
  void look_runs_as(int host, TaskId command);
  // The look at `host` ended; false when it had been given up on: its
  // answer is not looked at.
  bool look_ends(int host);
  // When the look under way at `host` is given up; nullopt: none is.
  std::optional<Clock::time_point> give_up_at(int host) const;
  // Gives up the look at `host` if `now` is past its time: its command, to
  // kill; nullopt when none was overdue.
  std::optional<TaskId> give_up_if_overdue(int host, Clock::time_point now);

  // What a look at `host` found at `now` (what each GPU holds, by index),
  // for its free gated slots; what to say: a line for each slot whose GPU
  // is busy for a new reason, or free again.
  std::vector<std::string> record(int host, const std::map<std::string, GpuUsage>& usage,
                                  Clock::time_point now);
  // `host`'s GPUs cannot be looked at: from now on its gated slots take
  // jobs unchecked.
  void broke(int host) { m_hosts[host].broken = true; }

 private:
  struct Gate {
    enum class State { unchecked, free, busy } state = State::unchecked;
    Clock::time_point checked_at{};
    std::string why;  // busy: what holds it
  };
  struct HostLooks {
    // The look under way: by which command of the runner's, and until when
    // at most.
    struct Look {
      TaskId command = 0;
      Clock::time_point give_up_at{};
    };
    std::optional<Look> look;
    bool broken = false;
  };
  bool gated(int slot) const;

  const Fleet& m_fleet;
  const SlotBook& m_slots;
  bool m_enforced;
  std::vector<Gate> m_gates;       // per slot
  std::vector<HostLooks> m_hosts;  // per host
};

}  // namespace runner
