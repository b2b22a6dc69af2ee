// The journal compacted: a position in the journal, the records before it
// that still matter (its runs, and the jobs not done with: running, to run
// again, services, failures), and a summary of the ones dropped, kept in
// state_dir/journal.checkpoint by the commands that read the journal, so
// that the next one reads only what came after it. What is kept and how
// the dropped records are summed up is the reader's (report/campaign_index);
// this is the file. A checkpoint is a cache: a missing, unreadable or
// foreign one is read as none, and the journal read from its start.
//
// Threading: none.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/core/status.h"
#include "runner/state/journal_records.h"
#include "runner/state/journal_segments.h"

namespace runner {

struct JournalCheckpoint {
  JournalPosition position;             // the journal's records before it are compacted here
  std::vector<JournalRecord> records;   // those that still matter, in journal order
  nlohmann::json summary;               // what the dropped ones added up to
  std::vector<std::string> skipped;     // lines before it that were not whole records
};

// state_dir/journal.checkpoint
std::string journal_checkpoint_path(const std::string& state_dir);

// nullopt when there is none, or it cannot be read, or another version
// wrote it.
std::optional<JournalCheckpoint> load_journal_checkpoint(const std::string& state_dir);

// Writes it whole beside the journal (a temporary file, then a rename), so a
// reader sees the old checkpoint or the new one.
Status save_journal_checkpoint(const std::string& state_dir, const JournalCheckpoint& checkpoint);

}  // namespace runner
