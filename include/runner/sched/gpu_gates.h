// The GPU gates of `gpu_free:` slots (hosts.yaml): such a slot takes a job
// only on a fresh look at what its GPU holds. This holds each gated slot's
// last look and each host's look under way, decides which ready host is to
// be looked at when (while its gated slots are free and work waits, again a
// few seconds later while a GPU is busy), reads what a look found, and says
// what changed; the scheduler runs the looks it asks for
// (HostOps::look_at_gpus) and hands back their answers. A host whose nvidia-smi fails, or does not
// answer within gpu_check_limit, is said once, and its slots then take jobs
// unchecked. A GPU that a job of this run holds through another slot is not
// free either, whatever nvidia-smi says yet. Queue mode only: broadcast
// steps run on every slot. Time is what it is given.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/gpu_free.h"
#include "runner/config/hosts.h"
#include "runner/core/clock.h"
#include "runner/exec/host_ops.h"
#include "runner/sched/host_table.h"
#include "runner/sched/job_end.h"
#include "runner/sched/run_observer.h"
#include "runner/sched/scheduler_options.h"
#include "runner/sched/slot_book.h"

namespace runner {

// A look at a host's GPUs to run now.
struct GpuLook {
  int host = 0;
};

// A look given up on at its limit: its command on `host`, to kill.
struct GpuLookGivenUp {
  int host = 0;
  TaskId command = 0;
};

class GpuGates {
 public:
  // The gates of `fleet`'s `gpu_free` slots, whose holders `slots` knows,
  // looked at on `hosts`' ready hosts, as `options` say (its mode: in
  // broadcast mode every gate is open; its gpu_check_limit); what changes
  // is said to `observer`.
  GpuGates(const Fleet& fleet, const SlotBook& slots, const HostTable& hosts,
           const SchedulerOptions& options, RunObserver& observer);

  // `slot` may take a job at `now`: it is not gated, its host cannot be
  // looked at, or a fresh look found its GPU free and no job of this run
  // holds that GPU through another slot.
  bool open(int slot, Clock::time_point now) const;
  // A free slot of `host` is shut: it will be looked at again.
  bool waiting(int host, Clock::time_point now) const;
  // When `host`'s free gated slots are to be looked at; nullopt when none
  // is, a look is under way, or its GPUs cannot be looked at.
  std::optional<Clock::time_point> due(int host) const;

  // The looks to begin at `now`, on ready hosts, while `wanted` (work
  // waits and the run takes jobs): each is under way from now on, and given
  // up at gpu_check_limit.
  std::vector<GpuLook> begin_due_looks(bool wanted, Clock::time_point now);
  // The command that looks, to kill if it hangs (unless the look ended
  // already, as a command may end at once).
  void look_runs_as(int host, TaskId command);
  // The look at `host` answered at `now`: its gates as it found them (each
  // slot whose GPU is busy for a new reason, or free again, said), or, when
  // nvidia-smi failed, its gates open from now on (said). False when the
  // look had been given up on: its answer is not looked at.
  bool looked(int host, const GpuLookAnswer& answer, Clock::time_point now);
  // Gives up the looks under way past their limit at `now`: their hosts'
  // gates open from now on (said), and their commands are to be killed.
  std::vector<GpuLookGivenUp> give_up_overdue(Clock::time_point now);
  // When a look is next to begin (while `wanted`) or be given up.
  std::optional<Clock::time_point> next_due(bool wanted) const;

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
  // When a look at `host` is to begin, while `wanted`; nullopt: not.
  std::optional<Clock::time_point> look_due(int host, bool wanted) const;
  // What a look at `host` found at `now` (what each GPU holds, by index),
  // for its free gated slots; says each slot whose GPU is busy for a new
  // reason, or free again.
  void record(int host, const std::map<std::string, GpuUsage>& usage, Clock::time_point now);
  // From now on, `host`'s gated slots take jobs unchecked: says so, and why.
  void broke(int host, const std::string& why);

  const Fleet& m_fleet;
  const SlotBook& m_slots;
  const HostTable& m_host_table;
  const SchedulerOptions& m_options;
  RunObserver& m_observer;
  bool m_enforced;
  std::vector<Gate> m_gates;       // per slot
  std::vector<HostLooks> m_hosts;  // per host
};

}  // namespace runner
