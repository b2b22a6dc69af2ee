// What a run asks of the scheduler: its mode, how long jobs get to stop
// and to start, how often they run again, how lost hosts are reconnected,
// where outputs go, and the clock it reports by. Plain values, set by the
// command line.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "runner/core/clock.h"
#include "runner/probe/gpu_listing.h"
#include "runner/sched/job_end.h"

namespace runner {

struct SchedulerOptions {
  Mode mode = Mode::queue;
  bool daemon = false;         // keep waiting for jobs when the queue is empty
  bool ignore_errors = false;  // broadcast: go on after a failed step
  // How long a job gets between TERM and KILL when cancelled or timed out.
  Clock::duration kill_grace = std::chrono::seconds(5);
  // How soon to look at the queue again when it is locked or broken and no
  // file change is noticed.
  Clock::duration retry_interval = std::chrono::seconds(1);
  // How often a job lost with its host is put back in the queue.
  int max_requeue = 2;
  // How long past its timeout a job with a timeout may wait for its process
  // to start (the login shell's start-up) before it is stopped.
  Clock::duration start_allowance = std::chrono::seconds(60);
  // For jobs that do not say `timeout:` / `retries:` themselves.
  std::optional<std::chrono::milliseconds> default_timeout;
  int default_retries = 0;
  // Leave the processes of lost jobs alone when their host comes back.
  bool keep_orphans = false;
  // Reconnecting a lost host: first wait, longest wait, and how many tries
  // before it is given up (a daemon never gives up).
  Clock::duration reconnect_first = std::chrono::seconds(1);
  Clock::duration reconnect_longest = std::chrono::seconds(60);
  int reconnect_tries = 10;
  // How long a host's nvidia-smi may take to say what its GPUs hold
  // (`gpu_free:`) before it is taken as unable to.
  Clock::duration gpu_check_limit = k_gpu_usage_limit;
  // Where jobs' `outputs:` are brought back to (<dir>/<job>/, and
  // <dir>/<job>/<rank>/ for a job that spans hosts); empty: not brought back.
  std::string outputs_dir;
  // Inside a Slurm allocation: when it ends. A job is started only when it
  // would end before then, judging by the mean duration of the jobs that
  // succeeded so far (before any did: while time is left); once one would
  // not, no more start and the queue keeps the rest.
  std::optional<Clock::time_point> take_until;
  // Names this run's files on hosts (a multi-node job's hostfile): the
  // journal's run id.
  std::string run_id = "run";
  // The time of what executors report. They report while the event loop
  // steps them, before the scheduler's own step of that round: a job's end
  // is timed by this clock, not by the scheduler's previous step.
  ClockSource clock = steady_clock_source();
};

}  // namespace runner
