// FrontTaker: jobs taken off the front of a queue document by splicing
// only the entry each comes from, checked by parsing that entry's new text
// and the entry after it; text_without_first_job when that check cannot
// vouch for the splice. Pure.
#include "runner/queue/front_taker.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

#include "queue_entries.h"
#include "text_lines.h"

namespace runner {

namespace {

constexpr std::size_t k_npos = std::string::npos;

int count_lines(std::string_view text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

void shift_lines(QueueEntry& entry, int by) {
  entry.line += by;
  for (auto& key : entry.keys) key.line += by;
}

// Whether every value fits on one line, so that entry_to_yaml writes the
// entry as lines that are all content (no block scalar, no blank line).
bool single_line_values(const QueueEntry& entry) {
  for (const auto& key : entry.keys)
    for (const auto& value : key.values)
      if (value.find_first_of("\r\n") != std::string::npos) return false;
  return true;
}

// A value or key that a flow list holds as itself, unquoted: taking it out
// of the list's text (with the ", " after it) leaves the list of the rest.
bool plain_token(std::string_view text) {
  if (text.empty()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool letter_or_digit =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    bool inner = c == '_' || c == '.' || c == '/' || c == '+' || c == '-';
    if (!letter_or_digit && !(inner && i > 0)) return false;
  }
  return true;
}

// `text` (entry_to_yaml of `before`, at `indent`) edited into the text of
// `after` when `after` is `before` without the first value of one flow list
// of plain tokens: that value and the ", " after it are cut from its line.
// nullopt when the change is anything else.
std::optional<std::string> cut_first_value(std::string_view text, const QueueEntry& before,
                                           const QueueEntry& after, int indent) {
  if (before.plain != after.plain || before.keys.size() != after.keys.size()) return std::nullopt;
  std::optional<std::size_t> changed;
  for (std::size_t k = 0; k < before.keys.size(); ++k) {
    const EntryKey& x = before.keys[k];
    const EntryKey& y = after.keys[k];
    if (x.name != y.name || x.was_list != y.was_list) return std::nullopt;
    if (x.values == y.values) continue;
    if (changed || x.values.size() < 2 || y.values.size() + 1 != x.values.size() ||
        !std::equal(y.values.begin(), y.values.end(), x.values.begin() + 1))
      return std::nullopt;
    changed = k;
  }
  if (!changed) return std::nullopt;
  const EntryKey& key = before.keys[*changed];
  // Still a list once shortened (a lone value not written as a list would
  // become a scalar), and every part of the line plain.
  if (!key.was_list && after.keys[*changed].values.size() == 1) return std::nullopt;
  if (!plain_token(key.name) || !plain_token(key.values.front())) return std::nullopt;
  std::string line = std::string(static_cast<std::size_t>(indent), ' ') +
                     (*changed == 0 ? "- " : "  ") + key.name + ": [";
  std::string cut = key.values.front() + ", ";
  std::string pattern = (*changed == 0 ? "" : "\n") + line + cut;
  std::size_t at = *changed == 0 ? (text.starts_with(pattern) ? 0 : k_npos) : text.find(pattern);
  if (at == k_npos) return std::nullopt;
  if (*changed != 0 && text.find(pattern, at + 1) != k_npos) return std::nullopt;
  std::string edited(text.substr(0, at + pattern.size() - cut.size()));
  edited.append(text.substr(at + pattern.size()));
  return edited;
}

}  // namespace

FrontTaker::FrontTaker(QueueDocument doc) : m_base(std::move(doc)) {
  if (!m_base.entries.empty()) {
    m_cursor = m_base.entries.front().begin;
    m_head = m_base.text.substr(0, m_cursor);
    m_head_lines = m_cursor_lines = count_lines(m_head);
  }
}

std::optional<JobSpec> FrontTaker::peek() const {
  if (!m_front.empty()) {
    JobSpec job = first_job(m_front.front().entry);
    job.line += m_head_lines;
    return job;
  }
  if (m_next >= m_base.entries.size()) return std::nullopt;
  JobSpec job = first_job(m_base.entries[m_next].entry);
  job.line += m_head_lines - m_cursor_lines;
  return job;
}

Status FrontTaker::take() {
  if (take_fast()) return Status();
  return take_slow();
}

std::optional<FrontTaker::Written> FrontTaker::cut_own_text(const QueueEntry& first,
                                                            const QueueEntry& rest,
                                                            int indent) const {
  std::string_view own;
  QueueEntry entry = first;  // lines counted from the first line of `own`
  if (!m_front.empty()) {
    own = m_front.front().text;
  } else if (m_base.entries[m_next].written_by_taker) {
    const EntrySpan& span = m_base.entries[m_next];
    std::string_view base = m_base.text;
    own = base.substr(span.begin, span.end - span.begin);
    shift_lines(entry, -count_lines(base.substr(0, span.begin)));
  } else {
    return std::nullopt;
  }
  std::optional<std::string> text = cut_first_value(own, first, rest, indent);
  if (!text) return std::nullopt;
  entry.keys = rest.keys;
  for (std::size_t k = 0; k < entry.keys.size(); ++k)
    entry.keys[k].line = first.keys[k].line - (first.line - entry.line);
  return Written{std::move(entry), std::move(*text), 0};
}

bool FrontTaker::take_fast() {
  if (!m_base.block_style) return false;
  bool written = !m_front.empty();
  const QueueEntry& first = written ? m_front.front().entry : m_base.entries[m_next].entry;
  std::vector<QueueEntry> rest = remainder_after_first(first);
  for (const auto& entry : rest)
    if (!single_line_values(entry)) return false;

  const std::string& base = m_base.text;
  int indent = m_base.entries.front().indent;
  bool crlf =
      written ? uses_crlf(m_front.front().text) : uses_crlf(base, m_base.entries[m_next].begin);
  std::size_t after = m_cursor;  // where the base text resumes after the entry
  std::size_t next = m_next;     // the base entry after it
  if (!written) {
    const EntrySpan& span = m_base.entries[m_next];
    // An anchor in the entry may be used by an alias further on, which only
    // a parse of the whole file sees.
    if (std::string_view(base).substr(span.begin, span.end - span.begin).find('&') != k_npos &&
        base.find('*', span.end) != k_npos)
      return false;
    after = span.end;
    next = m_next + 1;
  }

  std::vector<std::string> texts;
  std::optional<std::vector<QueueEntry>> parsed;
  // What follows the taker's own text is as it was: no parse needed.
  std::optional<Written> cut =
      rest.size() == 1 ? cut_own_text(first, rest.front(), indent) : std::nullopt;
  if (cut) {
    texts.push_back(std::move(cut->text));
    parsed = std::vector<QueueEntry>{std::move(cut->entry)};
  } else {
    // The new text and what follows it up to the end of the next entry must
    // parse to the rest of the entry followed by that next entry.
    std::string window;
    for (const auto& entry : rest) {
      texts.push_back(with_line_ends(entry_to_yaml(entry, indent), crlf));
      window += texts.back();
    }
    std::vector<QueueEntry> expected = rest;
    if (written && m_front.size() > 1) {
      window += m_front[1].text;
      expected.push_back(m_front[1].entry);
    } else if (next < m_base.entries.size()) {
      window.append(base, after, m_base.entries[next].end - after);
      expected.push_back(m_base.entries[next].entry);
    } else {
      window.append(base, after, k_npos);
    }
    parsed = entries_of(window);
    if (!parsed || !same_entries(*parsed, expected)) return false;
  }

  if (written) {
    m_front_lines -= m_front.front().lines;
    m_front.pop_front();
  } else {
    const EntrySpan& span = m_base.entries[m_next];
    std::string_view gap = std::string_view(base).substr(m_cursor, span.begin - m_cursor);
    m_head.append(gap);
    m_head_lines += count_lines(gap);
    m_cursor_lines += count_lines(std::string_view(base).substr(m_cursor, after - m_cursor));
    m_cursor = after;
    m_next = next;
  }
  int lines_before = 0;
  std::vector<Written> added;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    Written entry{std::move((*parsed)[i]), std::move(texts[i]), 0};
    entry.lines = count_lines(entry.text);
    shift_lines(entry.entry, -lines_before);
    lines_before += entry.lines;
    added.push_back(std::move(entry));
  }
  m_front_lines += lines_before;
  m_front.insert(m_front.begin(), std::make_move_iterator(added.begin()),
                 std::make_move_iterator(added.end()));
  return true;
}

Status FrontTaker::take_slow() {
  QueueDocument current = materialize();
  Result<QueueDocument> next = parse_queue_document(text_without_first_job(current), current.path);
  if (!next) {
    *this = FrontTaker(std::move(current));
    return next.status();
  }
  *this = FrontTaker(std::move(*next));
  return Status();
}

QueueDocument FrontTaker::materialize() {
  QueueDocument doc;
  doc.path = m_base.path;
  doc.block_style = m_base.block_style;
  if (m_base.entries.empty()) {
    doc.text = m_base.text;
    return doc;
  }
  doc.text = m_head;
  int indent = m_base.entries.front().indent;
  int lines = m_head_lines;
  for (Written& written : m_front) {
    EntrySpan span{std::move(written.entry), doc.text.size(), 0, indent, true};
    shift_lines(span.entry, lines);
    doc.text += written.text;
    span.end = doc.text.size();
    lines += written.lines;
    doc.entries.push_back(std::move(span));
  }
  std::ptrdiff_t offset =
      static_cast<std::ptrdiff_t>(doc.text.size()) - static_cast<std::ptrdiff_t>(m_cursor);
  int line_offset = lines - m_cursor_lines;
  doc.text.append(m_base.text, m_cursor, k_npos);
  for (std::size_t i = m_next; i < m_base.entries.size(); ++i) {
    EntrySpan span = std::move(m_base.entries[i]);
    span.begin = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(span.begin) + offset);
    span.end = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(span.end) + offset);
    shift_lines(span.entry, line_offset);
    doc.entries.push_back(std::move(span));
  }
  return doc;
}

QueueDocument FrontTaker::finish() && {
  if (m_head.size() == m_cursor && m_front.empty() && m_next == 0) return std::move(m_base);
  return materialize();
}

}  // namespace runner
