// queue.yaml as text plus the byte span of every top-level entry, so that
// consuming a job rewrites only the entry it came from and every other byte
// (comments, blank lines, formatting) stays as the user wrote it. Pure.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/queue_entry.h"

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
// entries. Throws ConfigError with path:line:col for YAML syntax errors, a
// top level that is not a sequence, and any invalid entry.
QueueDocument parse_queue_document(std::string text, const std::string& path);

// The first job of the queue, or nullopt when empty.
std::optional<JobSpec> peek_first_job(const QueueDocument& doc);

// The text of the file after its first job is removed: the first entry's
// span is replaced by entry_to_yaml() of remainder_after_first() (nothing
// when it held one job); every other byte is unchanged. A flow-style document
// is rewritten whole as a block sequence.
std::string text_without_first_job(const QueueDocument& doc);

// The text of the file with `items` (YAML text of sequence items, as
// produced by entry_to_yaml) appended as new last entries; the original
// bytes are kept, a missing final newline is added. Empty or comment-only
// files and `[]`/flow documents are handled (the result parses, holding the
// old jobs then the new ones).
std::string text_with_appended(const QueueDocument& doc, const std::string& items);

// Takes jobs off the front of a parsed document, one at a time, each for
// about the cost of the entry the job comes from: the splice is checked by
// parsing only the new text and the entry after it, not the whole file.
// finish() gives the document that text_without_first_job applied once per
// job (and a parse after each) would give, in one pass over the text. A step
// that the local check cannot vouch for (a flow-style file, multi-line
// values, anchors) is done the slow way: the whole text is built, spliced by
// text_without_first_job and parsed again. A take that only drops the first
// value of a flow list in an entry the taker wrote itself is a text edit
// with no parse, so a long list drains in linear time.
class FrontTaker {
 public:
  explicit FrontTaker(QueueDocument doc);

  // The first job of the queue as it stands, or nullopt when it is empty.
  std::optional<JobSpec> peek() const;
  // Removes the first job; the queue must not be empty.
  void take();
  // The document without the jobs taken.
  QueueDocument finish() &&;

 private:
  // An entry written by the taker (the rest of a product entry), which
  // precedes every untouched entry of the base document.
  struct Written {
    QueueEntry entry;  // lines counted from the first line of `text`
    std::string text;
    int lines = 0;     // '\n' in text
  };

  bool take_fast();
  // When `rest` is `first` without the first value of one flow list, and
  // the first entry's text is the taker's own (checked by a parse when it
  // was written): that text with the value cut out. Its lines are not set.
  std::optional<Written> cut_own_text(const QueueEntry& first, const QueueEntry& rest,
                                      int indent) const;
  void take_slow();
  // The document as it stands; leaves this taker empty.
  QueueDocument materialize();

  QueueDocument m_base;        // parsed; entries before m_next are gone
  std::string m_head;          // the text before m_front: header and kept gaps
  int m_head_lines = 0;
  std::deque<Written> m_front;
  int m_front_lines = 0;
  std::size_t m_next = 0;      // first untouched entry of m_base
  std::size_t m_cursor = 0;    // where the untouched text of m_base begins
  int m_cursor_lines = 0;      // '\n' in m_base.text before m_cursor
};

}  // namespace runner
