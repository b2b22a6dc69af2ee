// The journal as files, and reading it back. The journal is the live file
// state_dir/journal.jsonl and, once that grew past its size limit and the
// writer moved it aside (Journal::rotate), sealed segments
// state_dir/journal/000001.jsonl, 000002.jsonl, ..., oldest first: the
// journal is their concatenation, then the live file. A segment's number
// stays its own when it is sealed (the live file's is one past the last
// sealed one), so a position in the journal stays true across rotations.
//
// Threading: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/job_exit.h"
#include "runner/core/result.h"
#include "runner/core/status.h"

namespace runner {

// state_dir/journal: where sealed segments go.
std::string sealed_segments_dir(const std::string& state_dir);

// The path of sealed segment `number`: state_dir/journal/000012.jsonl.
std::string sealed_segment_path(const std::string& state_dir, std::uint64_t number);

// The numbers of the sealed segments, oldest first (none without the
// folder); an error when the folder cannot be read.
Result<std::vector<std::uint64_t>> list_sealed_segments(const std::string& state_dir);

// Where a reading of the journal has got to: `offset` bytes into segment
// `segment`, at the end of a whole line.
struct JournalPosition {
  std::uint64_t segment = 1;
  std::uint64_t offset = 0;
  // The bytes just before `offset` (up to 32), by which a later reading
  // sees that the segment is still the file that was read.
  std::string before;
};

struct JournalRead {
  // The records after the starting position, in order (none when a
  // JournalRecordSink took them).
  std::vector<nlohmann::json> records;
  std::size_t record_count = 0;  // how many records were read
  // Where a later reading goes on: the end of the last whole line. A record
  // whose newline is not written yet is read, and read again next time.
  JournalPosition end;
  bool unterminated_tail = false;  // the last record is one such
  bool tail_skipped = false;       // the last of `skipped` is such a line, not whole (yet)
  bool whole = true;               // read to the live file's end; false: `end` goes on
  // Each line that was not a whole record, described
  // ("…/journal.jsonl line 12: not a whole record …; skipped").
  std::vector<std::string> skipped;
};

// Whether a line is worth parsing; every line when empty.
using JournalLineFilter = std::function<bool(std::string_view line)>;

// What a sealed segment holds, as the writer noted it beside the segment
// (journal/000012.index: the job ids its records are about, as ranges, and
// whether it holds a run's start or end), so that a reader after one job's
// records reads only the segments that have some.
struct SegmentIndex {
  bool runs = false;
  std::vector<std::pair<JobId, JobId>> jobs;  // first and last of each range, ascending

  bool mentions(JobId id) const;
};

// Writes the index of sealed segment `number`: its runs, and the ids of its
// jobs in any order.
Status write_segment_index(const std::string& state_dir, std::uint64_t number, bool runs,
                           std::vector<JobId> jobs);

// nullopt when there is none (a segment sealed by an older version, or a
// crash between the two) or it cannot be read.
std::optional<SegmentIndex> read_segment_index(const std::string& state_dir, std::uint64_t number);

// Whether a sealed segment is worth reading, by its index.
using SegmentFilter = std::function<bool(const SegmentIndex& index)>;

// Takes each record as it is read, with its text (the bytes of the line it
// was parsed from, or of the part of it that held the record), instead of
// JournalRead::records.
using JournalRecordSink = std::function<void(nlohmann::json&& record, std::string_view text)>;

// The records of state_dir's journal after `from` (the default: all of
// them), sealed segments then the live file, parsing only the lines `keep`
// accepts and reading only the sealed segments whose index `wanted` accepts
// (every one without an index), and no more than `segments_at_most`
// segments (then `whole` is false, and a reading from `end` goes on), each
// record to `sink` when one is given. nullopt when `from` is not a
// position of this journal (its segment is gone, or shorter, or holds other bytes there; `sink` may
// have had records of the segments before). A missing journal has no records. An error
// when a file cannot be read.
Result<std::optional<JournalRead>> read_journal_from(const std::string& state_dir,
                                                     const JournalPosition& from = {},
                                                     const JournalLineFilter& keep = {},
                                                     const SegmentFilter& wanted = {},
                                                     std::size_t segments_at_most = SIZE_MAX,
                                                     const JournalRecordSink& sink = {});

// The value of a journal line's top-level "job" key when it is an unsigned
// integer, without parsing the line: it scans only as far as that key (the
// third one in records written here), so a line cut short after it still
// says whose it is.
std::optional<JobId> journal_line_job(std::string_view line);

// Every record of the journal at `path`, one file, in order. Lines that are
// not whole records (cut short by a crash or a full disk) are skipped, and
// each is described in `skipped` ("journal.jsonl line 12: not a whole
// record, cut short when it was written; skipped"); a line whose record was
// cut short and had another glued behind it (by older versions) keeps the
// latter. A missing file has no records; an error when the file cannot be
// read.
Result<std::vector<nlohmann::json>> read_journal(const std::string& path,
                                                 std::vector<std::string>* skipped = nullptr);

// One line of a journal, read as read_journal reads it. Not a failure when
// it is not a whole record: the reading goes on without what was skipped.
struct JournalLine {
  // Its record; none for an empty line or one cut short.
  std::optional<nlohmann::json> record;
  // The bytes the record was parsed from: the line, or its glued part.
  std::string_view text;
  // What was skipped of it when it was not a whole record ("not a whole
  // record (cut short when it was written); skipped"); empty when nothing
  // was. A record cut short with the next one glued behind it (by older
  // versions) has both: the glued record, and the cut one skipped.
  std::string skipped;
};
JournalLine parse_journal_line(std::string_view line);

}  // namespace runner
