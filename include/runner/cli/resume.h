// Starting a run on a state directory that an earlier run left behind:
// refusing while another runner still uses it, refusing (with the reason)
// when a dead run left jobs unfinished, and with --resume turning those jobs
// into orphans for the scheduler to check, clean up and run again.
#pragma once

#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/sched/scheduler.h"
#include "runner/state/journal_replay.h"

namespace runner {

// Throws ConfigError when another live runner has the state directory, or
// when jobs are unfinished and `resume` is false. Returns the jobs to adopt.
std::vector<OrphanJob> jobs_to_resume(const JournalReplay& replay, const Fleet& fleet,
                                      const std::string& journal_path, bool resume);

}  // namespace runner
