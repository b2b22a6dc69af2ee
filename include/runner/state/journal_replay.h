// What a journal says about the runs that wrote it: whether one of them is
// still going, and which jobs were left unfinished by a run that died.
// Pure: works on the journal's records.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/job_exit.h"
#include "runner/core/process_group.h"
#include "runner/state/journal_records.h"

namespace runner {

// A job whose last record is a start (it may still run on its host), an
// end that promised a rerun that never came, or its take ahead of need
// (it never started).
struct UnfinishedJob {
  JobId id = 0;
  std::string host;     // from its last job_start; empty: never started
  ProcessGroup group;   // id 0: never recorded
  bool running = true;  // false: it had ended and waited to run again
  // Its last job_start record; of a job that never started, what its
  // job_taken_ahead says (attempt 0).
  JobStartRecord start;
  // A job that spans hosts: the process groups of ranks 1 and up (rank 0's
  // is `group`, on `host`); their hosts are in `start`'s tasks.
  std::map<int, ProcessGroup> rank_groups;
};

// A run that started and never wrote run_end.
struct OpenRun {
  std::string run;
  long pid = 0;
  std::string started;  // its run_start time
};

struct JournalReplay {
  std::vector<UnfinishedJob> unfinished;  // by job id
  std::vector<OpenRun> open_runs;         // oldest first
};

JournalReplay replay_journal(const std::vector<JournalRecord>& records);

}  // namespace runner
