// queue.yaml as text plus the byte span of every top-level entry, so that
// consuming a job rewrites only the entry it came from and every other byte
// (comments, blank lines, formatting) stays as the user wrote it. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/queue_entry.h"
#include "runner/core/result.h"

namespace runner {

struct EntrySpan {
  QueueEntry entry;
  std::size_t begin = 0;  // offset of the first byte of the entry's first line
  std::size_t end = 0;    // one past its last content line's '\n' (or EOF);
                          // trailing blank and comment lines belong to the
                          // next entry
  int indent = 0;         // column of the entry's '-'
  // The text is entry_to_yaml's, written by a FrontTaker and checked by a
  // parse then: a later take may edit it without parsing it again.
  bool written_by_taker = false;
};

struct QueueDocument {
  std::string path;  // for messages
  std::string text;
  std::vector<EntrySpan> entries;
  bool block_style = true;  // false for a flow sequence `[a, b]` at top level, or when
                            // the entries cannot be told apart in the text; such a
                            // file is rewritten whole
};

// Parses the whole file. Empty text, only comments, `~` or `[]` give no
// entries. A failure naming path, line and column (Status::at) for YAML
// syntax errors, a top level that is not a sequence, and any invalid entry.
Result<QueueDocument> parse_queue_document(std::string text, const std::string& path);

// The first job of the queue, or nullopt when empty.
std::optional<JobSpec> peek_first_job(const QueueDocument& doc);

// The text of the file after its first job is removed: the first entry's
// span is replaced by entry_to_yaml() of remainder_after_first() (nothing
// when it held one job); every other byte is unchanged. A flow-style document
// is rewritten whole as a block sequence.
std::string text_without_first_job(const QueueDocument& doc);

// The text of the file with the entries of `added` (a document of YAML
// sequence items, as entry_to_yaml writes them) appended as new last
// entries; the original
// bytes are kept, a missing final newline is added. Empty or comment-only
// files and `[]`/flow documents are handled (the result parses, holding the
// old jobs then the new ones).
std::string text_with_appended(const QueueDocument& doc, const QueueDocument& added);

}  // namespace runner
