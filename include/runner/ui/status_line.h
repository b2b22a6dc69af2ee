// The live status line of a run on a terminal: jobs done, failed, running
// and queued, elapsed time, an ETA from the durations seen so far, and busy
// over total slots. StatusLine keeps the counts as the run reports them and,
// as a Pollable of the event loop, redraws through Console at most four
// times a second (Console owns the terminal and keeps the line below the
// job output). format_status_line and estimate_remaining are the pure parts.
//
// Threading: none.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runner/core/job_exit.h"
#include "runner/core/pollable.h"
#include "runner/ui/console.h"

namespace runner {

// What the status line shows.
struct RunProgress {
  std::size_t succeeded = 0;
  std::size_t failed = 0;  // failed, lost or cancelled
  std::size_t running = 0;
  std::optional<std::size_t> queued;  // unknown while the queue cannot be read
  std::size_t runs_per_job = 1;       // broadcast: each queued job runs on every slot
  std::size_t busy_slots = 0;
  std::size_t total_slots = 0;
  std::size_t hosts_down = 0;
  std::chrono::milliseconds elapsed{0};
  std::optional<std::chrono::milliseconds> eta;
};

// "[####......] 12/40 done · 1 failed · 4 running · 24 queued · 4/8 slots busy
//  · 5m 02s · ETA 12m 30s" (done counts runs: a broadcast job is one run per
// slot), at most `width` - 1 columns: the least useful
// parts (the bar first, then elapsed time, ...) are dropped to fit. With
// `color`, a non-zero failed count is red. No line break.
std::string format_status_line(const RunProgress& progress, std::size_t width, bool color);

// "42s", "5m 02s", "1h 02m", "3d 04h": whole units, for a line that is
// redrawn while one reads it.
std::string format_short_duration(std::chrono::milliseconds duration);

// A running job, for the estimate: how long it has run and how many slots
// it holds.
struct RunningShare {
  std::chrono::milliseconds elapsed{0};
  std::size_t slots = 1;
};

// Time until the work left is done if it keeps the pace seen so far:
// every queued run and what running jobs still need (the mean less what
// they have run, never below zero), in slot-time, spread over
// `usable_slots`, and never sooner than the running job furthest from done.
// `mean_slot_time` is the mean over finished jobs of duration × slots held.
// nullopt without a finished job or a usable slot.
std::optional<std::chrono::milliseconds> estimate_remaining(
    std::optional<std::chrono::milliseconds> mean_slot_time, std::size_t queued_runs,
    const std::vector<RunningShare>& running, std::size_t usable_slots);

// Keeps a run's counts and draws them as the status line.
class StatusLine final : public Pollable {
 public:
  // How many jobs the queue holds, or nullopt when it cannot tell (locked
  // out, does not parse).
  using CountQueued = std::function<std::optional<std::size_t>()>;

  // `total_slots` of the fleet; `runs_per_job` is 1 in queue mode and the
  // slot count in broadcast mode. count_queued is called from step(), at
  // most once a second and only after queue_changed() or a job start.
  StatusLine(Console& console, std::size_t total_slots, std::size_t runs_per_job,
             CountQueued count_queued, Clock::time_point start);

  void job_started(JobId job, std::size_t slots, Clock::time_point now);
  // `runs_again`: the job goes back to the queue to be run again (a retry,
  // or its host was lost); it counts as queued, not as done.
  void job_finished(JobId job, bool succeeded, Clock::duration took, bool runs_again = false);
  // The host `name` is down with its `slots` slots (said again while it is
  // down, it still counts once).
  void host_down(const std::string& name, std::size_t slots);
  // The host `name` takes jobs (again).
  void host_up(const std::string& name);
  // The queue file changed: count it again.
  void queue_changed() { m_queue_dirty = true; }

  RunProgress progress(Clock::time_point now) const;
  // Erases the line for good (before the end-of-run summary).
  void finish();

  // Pollable: no descriptors; step() redraws when due.
  void poll_fds(std::vector<pollfd>&) override {}
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override;

 private:
  struct Running {
    Clock::time_point start;
    std::size_t slots = 1;
  };

  Console& m_console;
  std::size_t m_total_slots;
  std::size_t m_runs_per_job;
  CountQueued m_count_queued;
  Clock::time_point m_start;

  std::size_t m_succeeded = 0;
  std::size_t m_failed = 0;
  std::unordered_map<std::string, std::size_t> m_down_hosts;  // name → its slots
  std::size_t m_busy_slots = 0;
  std::unordered_map<JobId, Running> m_running;
  std::unordered_set<JobId> m_reruns;        // ended, to be run again
  std::chrono::milliseconds m_slot_time{0};  // sum of duration × slots of finished jobs
  std::size_t m_finished = 0;

  std::optional<std::size_t> m_queued;
  bool m_queue_dirty = true;
  Clock::time_point m_next_count{};
  Clock::time_point m_next_draw{};
  bool m_finished_drawing = false;
};

}  // namespace runner
