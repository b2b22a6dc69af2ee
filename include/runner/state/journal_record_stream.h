// The journal's records from its start, typed, handed to the caller in
// order while a thread of its own reads and parses the ones after them: a
// reader that folds records (`runner results`, `report`) pays for the
// parsing or the folding, whichever is dearer, not for both.
// Threading: `fold` runs on the calling thread; the reading on its own.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runner/core/result.h"
#include "runner/state/journal_records.h"
#include "runner/state/journal_segments.h"

namespace runner {

// read_journal_from(state_dir) of the whole journal, each record that is
// one of JournalRecord's to `fold` in the journal's order. A few batches of
// records are read ahead at most: a long journal is never all in memory.
Result<std::optional<JournalRead>> fold_journal_records(
    const std::string& state_dir, const std::function<void(const JournalRecord&)>& fold);

}  // namespace runner
