// What a job sees when it runs: its variables on the slots it was given and
// its rendered command (SPEC section 3), and the check, before anything
// runs, that every queued job fits the fleet and renders. Pure logic.
#pragma once

#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/params.h"
#include "runner/config/queue_entry.h"
#include "runner/core/result.h"

namespace runner {

// How jobs meet slots: `queue` runs each job once on job.slots free slots of
// one host; `broadcast` runs each job on every slot, one slot per run.
enum class JobPlacement { queue, broadcast };

// The variables of `job` on `slot_ids` (Fleet::slots indices, all of one
// host, in allocation order), each name once: `builtins` first (a
// multi-node job's `rank`, ...: multi_node.h), then `hostname` (Host::name),
// `slots` (the Slot::index values, comma-joined) and `allocation_policy`
// (allocation_name of job.allocation, as Pegasus renders it), then every
// host parameter that all the given slots define, its values comma-joined
// in slot order ("2,3") with one value for the slots one `slots: N` element
// gives, then the job's parameters. An earlier name shadows a later one:
// as in Pegasus, a host parameter wins over a job parameter of the same
// name, and `hostname` is always the slots' host.
// `slot_ids` must not be empty, nor name slots of several hosts.
Params job_variables(const JobSpec& job, const Fleet& fleet, const std::vector<int>& slot_ids,
                     const Params& builtins = {});

// How a job on `slot_ids` (all of one host) is named in output: the slot's
// label for one slot ("node01 gpu=0"); for several, the host and each
// parameter's values joined as job_variables joins them ("node01 gpu=2,3"),
// followed by the slot indices ("node01 #0,1", "node01 type=dgx #0,1") when
// the values do not tell the slots apart.
std::string slots_label(const Fleet& fleet, const std::vector<int>& slot_ids);

// job.command rendered with job_variables; where it cannot be, a Status of
// kind `undefined` ("<<nic>> is not defined") or a template's error.
Result<std::string> render_job(const JobSpec& job, const Fleet& fleet,
                               const std::vector<int>& slot_ids, const Params& builtins = {});

// Any template of the job (its `cancel:` command) rendered with
// job_variables, as render_job.
Result<std::string> render_for_job(std::string_view text, const JobSpec& job, const Fleet& fleet,
                                   const std::vector<int>& slot_ids, const Params& builtins = {});

// Checks every job of every entry without running anything, and without
// expanding products job by job. A failure naming queue_path, the entry's
// line and column (Status::at) for the first entry that
//  - needs more slots than the largest host has (queue), or more than one
//    slot (broadcast);
//  - has `nodes: N` in broadcast mode, or more nodes than the fleet has
//    hosts with its slots;
//  - uses a variable that neither the job, nor a builtin (`hostname`,
//    `slots`, `allocation_policy`; with `nodes:`, multi_node.h's; `NAME.GROUP` after an entry
//    with `service: NAME`), nor every slot of every host that could run it defines
//    (queue: hosts with at least job.slots slots; broadcast: all hosts).
Status validate_jobs(const std::vector<QueueEntry>& entries, const Fleet& fleet,
                     const std::string& queue_path, JobPlacement placement = JobPlacement::queue);

}  // namespace runner
