// A job and its tasks, as the scheduler runs them. A job is what the queue
// holds (one entry's expansion: a command with its parameters, timeout,
// retries); a task is one process of it on one host, on some of that host's
// slots, with its own command (rendered for those slots) and, once it runs,
// its process group. Every mode runs jobs of one task today; a job whose
// tasks span hosts (torchrun, MPI) has one task per host, ranked from 0.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/config/queue_entry.h"
#include "runner/core/clock.h"
#include "runner/core/job_exit.h"

namespace runner {

struct Task {
  TaskId id = 0;
  int rank = 0;            // 0 .. tasks-1 within its job
  int host = 0;            // index into Fleet::hosts
  std::vector<int> slots;  // indices into Fleet::slots, all of `host`
  std::string label;       // "node01 gpu=0", "node01 gpu=2,3"
  std::string command;     // rendered for its slots
  long pgid = 0;           // its process group on its host; 0 until it starts
  bool started() const { return pgid != 0; }
};

// A job that has been given slots and started.
struct RunningJob {
  JobId id = 0;
  JobSpec spec;
  std::vector<Task> tasks;  // at least one
  Clock::time_point start;  // sent to its hosts
  // When its processes started (every task's): its timeout and duration
  // count from here.
  std::optional<Clock::time_point> process_start;
  int attempt = 1;                            // 2 and up: run again after a loss or a failure
  int requeues = 0;                           // times put back after its host was lost
  int retries_used = 0;                       // times run again after failing
  int start_failures = 0;                     // times put back because it did not start
  std::optional<Clock::time_point> deadline;  // its timeout (before its start: its bound)
  std::optional<Clock::time_point> kill_at;   // SIGKILL if still running then
  bool timed_out = false;
  bool cancelled = false;
  bool will_rerun = false;  // set when it ended and goes back to the queue

  // Where it runs, for messages: its task's label, or its tasks' labels.
  std::string label() const;
  // Every slot of every task.
  std::vector<int> slots() const;
};

}  // namespace runner
