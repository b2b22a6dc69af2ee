// `--dry-run`: every job of the queue with the slot it would get and its
// fully rendered command, worked out without connecting to a host, running
// anything or writing a file. Pure.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/job_render.h"
#include "runner/config/queue_entry.h"
#include "runner/core/status.h"

namespace runner {

// One job as it would run.
struct PlannedJob {
  std::size_t number = 0;  // 1-based position in the queue
  JobSpec spec;
  std::vector<int> slots;  // Fleet::slots indices
  std::string label;       // "node01 gpu=0", "node01 gpu=2,3"
  std::string command;     // rendered on `slots`
  std::size_t wave = 0;    // 0: starts at once; n: after n earlier jobs on its slots ended
  int rank = 0;            // a job that spans hosts: one planned job per rank
};

// Calls `each` with every planned job, in queue order, one at a time, so
// that the plan of a product of a million jobs takes the memory of one.
// Queue placement: jobs in queue order take slots as the scheduler gives
// them when every host is up (the first host, in hosts.yaml order, with
// enough free slots); once none is free, as if every job took equally long.
// Broadcast placement: each job on every slot, in slot order, one wave per
// job. An error at queue_path and the entry's line for a job that fits no
// host or uses a variable nothing defines (validate_jobs says the same
// first); the plan ends with it.
Status plan_jobs(const std::vector<QueueEntry>& entries, const Fleet& fleet,
                 const std::string& queue_path, JobPlacement placement,
                 const std::function<void(const PlannedJob&)>& each);

// The width of the job numbers of a plan of `entries`: the digits of its
// last job's number.
std::size_t plan_number_width(const std::vector<QueueEntry>& entries);

// The job's line of the plan, "[label] command" and a newline; the lines of
// a multi-line command after the first are indented under it. With a
// `number_width`, the line starts with the job's position in the queue,
// right-aligned to that many digits.
std::string format_planned_job(const PlannedJob& job, std::size_t number_width);

}  // namespace runner
