// A campaign read through the journal's checkpoint (state/journal_checkpoint):
// the checkpoint's records and only the journal after it, so that `runner
// status`, `runner stop` and the start of a run cost what changed since the
// last reading, not the whole journal. Jobs that are done with (succeeded,
// or an attempt run again since) are compacted into their run's tally; what
// is kept is every run, and each job that still runs, waits to run again, is
// a service, or failed. The checkpoint is brought up to date when a reading
// went far past it.
//
// Threading: none.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runner/report/campaign.h"

namespace runner {

struct RecentCampaign {
  // Its jobs are the kept ones; each run's tally holds the others.
  Campaign campaign;
  // The records it was folded from: every record of the runs and of the
  // jobs not done with (what --resume needs of the journal).
  std::vector<JournalRecord> records;
};

// What a reading through the checkpoint finds, before it is folded into a
// campaign: what a run's start (--resume) and the checkpoint's upkeep need.
struct RecentRecords {
  // Every record of the runs and of the jobs not done with.
  std::vector<JournalRecord> records;
  // The jobs done with, summed per run.
  std::map<std::string, RunTally> tallies;
  // The lines that were not whole records, described.
  std::vector<std::string> skipped;
};

// How many records a reading goes past the checkpoint before it writes a
// new one.
constexpr std::size_t k_checkpoint_after_records = 2000;

// Reads the checkpoint and the journal after it, and writes a new checkpoint
// when it read at least `checkpoint_after` records past the old one. An
// error when the journal cannot be read. A checkpoint that cannot be
// written is left as it was.
Result<RecentRecords> read_recent_records(
    const std::string& state_dir, std::size_t checkpoint_after = k_checkpoint_after_records);

// read_recent_records, folded into a campaign.
Result<RecentCampaign> load_recent_campaign(
    const std::string& state_dir, const PidAlive& alive = process_alive,
    std::size_t checkpoint_after = k_checkpoint_after_records);

}  // namespace runner
