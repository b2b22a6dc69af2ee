// A job and its tasks, as the scheduler runs them. A job is what the queue
// holds (one entry's expansion: a command with its parameters, timeout,
// retries); a task is one process of it on one host, on some of that host's
// slots, with its own command (rendered for those slots) and, once it runs,
// its process group. A job of `nodes: N` (torchrun, MPI) has one task per
// host, ranked from 0, started and stopped together; every other job has
// one task. A job's life is a variant: queued (again), staging (a
// multi-node job holds its slots while its master port is found), running,
// done.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runner/config/multi_node.h"
#include "runner/config/queue_entry.h"
#include "runner/core/clock.h"
#include "runner/core/job_exit.h"
#include "runner/core/process_group.h"
#include "runner/exec/executor.h"

namespace runner {

// Where a job's tasks run: each task's slots (Fleet::slots, all of one
// host), rank order.
using Placement = std::vector<std::vector<int>>;

struct Task {
  TaskId id = 0;
  int rank = 0;            // 0 .. tasks-1 within its job
  int host = 0;            // index into Fleet::hosts
  std::vector<int> slots;  // indices into Fleet::slots, all of `host`
  std::string label;       // "node01 gpu=0", "node01 gpu=2,3"
  std::string command;     // rendered for its slots
  ProcessGroup group;      // its process group on its host; id 0 until it starts
  TaskSetup setup;         // a multi-node job's rank: its environment and hostfile
  std::optional<JobExit> exit;  // once it ended (a job's tasks end one by one)
  bool started() const { return group.id != 0; }
  // It ran and ended on a host that is still there (not lost with it).
  bool ended_on_its_host() const { return started() && exit && !exit->lost(); }
};

// Where a job is in its life, once the scheduler holds it (before that it
// is an entry of the queue file).
//
// Queued: put back to run again (lost with its host, failed with retries
// left, or it could not start), ahead of the queue file's jobs.
struct Queued {
  int avoid_slot = -1;  // the slot it failed on, if another is free
  bool taken_ahead = false;  // out of the queue file ahead of need, not run yet
};
// Staging: a multi-node job holds its slots while rank 0's host is asked
// which ports are in use; it is recorded and sent once its master port is
// chosen.
struct Staging {
  Placement placement;
};
// Running: it has its slots, and its tasks are sent to their hosts.
struct Running {
  Clock::time_point start;  // sent to its hosts
  // When its processes started (every task's): its timeout and duration
  // count from here.
  std::optional<Clock::time_point> process_start;
  std::optional<Clock::time_point> deadline;  // its timeout (before its start: its bound)
  std::optional<Clock::time_point> kill_at;   // SIGKILL if still running then
  bool timed_out = false;
  bool cancelled = false;
  // A multi-node job: the rank whose end (a failure, a loss) stopped the others.
  std::optional<int> failed_rank;
};
// Done: it ended, and goes back to the queue (Queued) if `will_rerun`:
// in this run, or, when the run is stopping, in the next (`--resume`).
struct Done {
  bool will_rerun = false;
  std::optional<int> failed_rank;  // as Running's
  bool in_next_run = false;
};

struct Job {
  JobId id = 0;
  JobSpec spec;
  std::vector<Task> tasks;  // while running: at least one
  int attempt = 1;          // 2 and up: run again after a loss or a failure
  int requeues = 0;         // times put back after its host was lost
  int retries_used = 0;     // times run again after failing
  int start_failures = 0;   // times put back because it did not start
  std::optional<NodeLayout> layout;  // a multi-node job, once placed
  int pinned_host = -1;  // a copy of an `every: host` job: its host, where it runs again
  std::variant<Queued, Staging, Running, Done> state;

  Running& running() { return std::get<Running>(state); }
  const Running& running() const { return std::get<Running>(state); }
  bool will_rerun() const {
    const Done* done = std::get_if<Done>(&state);
    return done && done->will_rerun;
  }
  bool reruns_in_next_run() const {
    const Done* done = std::get_if<Done>(&state);
    return done && done->will_rerun && done->in_next_run;
  }
  // A multi-node job, running or done: the rank whose end stopped the others.
  std::optional<int> failed_rank() const;
  // Where it runs, for messages: its task's label, or its tasks' labels.
  std::string label() const;
  // Every slot of every task.
  std::vector<int> slots() const;
};

}  // namespace runner
