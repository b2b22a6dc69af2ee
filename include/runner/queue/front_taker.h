// Taking jobs off the front of a queue document, each for about the cost
// of the entry the job comes from, for a consumer that takes many jobs
// between two writes of the file. Pure.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

#include "runner/config/queue_entry.h"
#include "runner/queue/queue_document.h"

namespace runner {

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
  // Removes the first job; the queue must not be empty. A failure, and the
  // taker as it was, when the text without it would not parse back (the
  // rewrite of an entry that the file's YAML cannot hold).
  Status take();
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
  Status take_slow();
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
