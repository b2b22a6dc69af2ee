// queue.yaml as text with the byte span of every top-level entry. Consuming
// a job splices new text over the first entry's span only; appending adds
// text after the last entry. Every result is parsed again and compared with
// the entries it must hold; should a splice ever not give them, the file is
// rewritten whole from its entries instead. Pure.
#include "runner/queue/queue_document.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "empty_list.h"
#include "runner/config/config_error.h"
#include "runner/config/yaml_documents.h"
#include "text_lines.h"

namespace runner {

namespace {

constexpr std::size_t k_npos = std::string::npos;

bool same_entry(const QueueEntry& a, const QueueEntry& b) {
  if (a.plain != b.plain || a.keys.size() != b.keys.size()) return false;
  for (std::size_t i = 0; i < a.keys.size(); ++i) {
    const EntryKey& x = a.keys[i];
    const EntryKey& y = b.keys[i];
    if (x.name != y.name || x.was_list != y.was_list || x.values != y.values) return false;
  }
  return true;
}

// The first YAML document of the text (null when there is none); a `[]`
// that entries follow is read as no content.
YAML::Node load_root(const std::string& text, const std::string& path) {
  std::optional<std::string> appended_to_empty = empty_list::blanked(text);
  std::vector<YAML::Node> documents =
      load_yaml_documents(appended_to_empty ? *appended_to_empty : text, path);
  for (std::size_t i = 1; i < documents.size(); ++i)
    if (!documents[i].IsNull()) {
      const YAML::Mark& mark = documents[i].Mark();
      throw ConfigError(path, mark.line + 1, mark.column + 1,
                        "a second YAML document starts here; the queue must be a single list");
    }
  return documents.empty() ? YAML::Node() : documents.front();
}

std::vector<QueueEntry> parse_entries(const YAML::Node& root, const std::string& path) {
  std::vector<QueueEntry> entries;
  if (!root || root.IsNull()) return entries;
  if (!root.IsSequence()) {
    const YAML::Mark& mark = root.Mark();
    throw ConfigError(path, mark.line + 1, mark.column + 1,
                      "the queue must be a YAML list, one `- command` or `- command: ...` item "
                      "per entry");
  }
  entries.reserve(root.size());
  for (const auto& item : root) entries.push_back(parse_queue_entry(item, path));
  return entries;
}

// True when `text` parses to exactly `expected`.
bool holds_entries(const std::string& text, const std::vector<QueueEntry>& expected) {
  std::vector<QueueEntry> entries;
  try {
    entries = parse_entries(load_root(text, ""), "");
  } catch (const std::exception&) {
    return false;
  }
  if (entries.size() != expected.size()) return false;
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (!same_entry(entries[i], expected[i])) return false;
  return true;
}

// The `-` of the top-level item whose content starts at `content`: the first
// non-blank character of its line, at or after `lower`, with only blank or
// comment lines between it and the content.
std::optional<std::size_t> find_dash(const std::string& text, std::size_t content,
                                     std::size_t lower) {
  std::size_t start = line_start(text, content);
  for (bool content_line = true;; content_line = false) {
    std::size_t first = text.find_first_not_of(' ', start == 0 ? bom_size(text) : start);
    if (first != k_npos && first >= lower && (!content_line || first < content) &&
        text[first] == '-' && is_separator(text, first + 1))
      return first;
    if (!content_line && !blank_or_comment(line_at(text, start))) return std::nullopt;
    if (start == 0 || start <= lower) return std::nullopt;
    start = line_start(text, start - 1);
  }
}

// Where the document ends: the first `---` or `...` line at or after `from`.
std::size_t find_document_end(const std::string& text, std::size_t from) {
  for (std::size_t start = from; start < text.size(); start = next_line(text, start)) {
    std::string_view line = line_at(text, start);
    if (is_marker_line(line, "---") || is_marker_line(line, "...")) return start;
  }
  return text.size();
}

// True when text[begin, end) is, on its own, a list of exactly `entry`.
bool is_whole_entry(const std::string& text, std::size_t begin, std::size_t end,
                    const QueueEntry& entry) {
  try {
    YAML::Node root = YAML::Load(text.substr(begin, end - begin));
    if (!root.IsSequence() || root.size() != 1) return false;
    return same_entry(parse_queue_entry(root[0], ""), entry);
  } catch (const std::exception&) {
    return false;
  }
}

// One past the last content line of the entry that starts at `begin`, given
// that the next entry (or the document's end) starts at `limit`. Trailing
// blank and comment lines are left out, unless they belong to a block or
// quoted scalar of the entry.
std::size_t content_end(const std::string& text, std::size_t begin, std::size_t limit,
                        const QueueEntry& entry) {
  std::size_t cut = limit;
  while (cut > begin) {
    std::size_t start = previous_line(text, cut);
    if (start <= begin || !blank_or_comment(line_at(text, start))) break;
    cut = start;
  }
  if (cut == limit) return limit;
  // Only a value holding '#' can have a comment-looking line inside it, only
  // a kept block scalar (`|+`) ends in blank lines, and only a block scalar
  // can end in a line of spaces.
  bool could_continue = false;
  for (const auto& key : entry.keys)
    for (const auto& value : key.values)
      could_continue = could_continue || value.find('#') != std::string::npos ||
                       (value.size() >= 2 && value.compare(value.size() - 2, 2, "\n\n") == 0);
  if (!could_continue) {
    bool spaces_line = false;
    for (std::size_t pos = cut; pos < limit; pos = next_line(text, pos)) {
      std::string_view line = line_at(text, pos);
      spaces_line = spaces_line || (!line.empty() && trimmed(line).empty());
    }
    bool block_scalar =
        std::string_view(text).substr(begin, cut - begin).find_first_of("|>") != k_npos;
    if (!spaces_line || !block_scalar) return cut;
  }
  for (std::size_t end = cut;; end = next_line(text, end)) {
    if (is_whole_entry(text, begin, end, entry)) return end;
    if (end >= limit) return limit;
  }
}

// The end of the comment lines indented deeper than the entry's `-` that
// follow it (with blank lines among them, but not after them).
std::size_t deeper_comments_end(const std::string& text, const EntrySpan& span) {
  std::size_t end = span.end;
  for (std::size_t pos = span.end; pos < text.size(); pos = next_line(text, pos)) {
    std::string_view line = line_at(text, pos);
    std::string_view content = trimmed(line);
    if (content.empty()) continue;
    if (content.front() != '#') break;
    std::size_t depth = line.find_first_not_of(" \t");
    if (depth <= static_cast<std::size_t>(span.indent)) break;
    end = next_line(text, pos);
  }
  return end;
}

// Fills begin/end/indent of every entry of a block-style document; false
// when the layout is not one this can follow.
bool locate_spans(QueueDocument& doc, const YAML::Node& root) {
  const std::string& text = doc.text;
  std::size_t offset = bom_size(text);
  std::vector<std::size_t> content;
  for (const auto& item : root) {
    if (item.Mark().pos < 0) return false;
    content.push_back(static_cast<std::size_t>(item.Mark().pos) + offset);
    if (content.back() >= text.size() && !text.empty()) return false;
  }
  std::size_t lower = 0;
  for (std::size_t i = 0; i < content.size(); ++i) {
    std::optional<std::size_t> dash = find_dash(text, content[i], lower);
    if (!dash) return false;
    EntrySpan& span = doc.entries[i];
    span.begin = std::max(line_start(text, *dash), offset);
    span.indent = static_cast<int>(*dash - span.begin);
    if (span.indent != doc.entries.front().indent) return false;
    lower = content[i] + 1;
  }
  std::size_t document_end = find_document_end(text, next_line(text, content.back()));
  for (std::size_t i = 0; i < doc.entries.size(); ++i) {
    std::size_t limit = i + 1 < doc.entries.size() ? doc.entries[i + 1].begin : document_end;
    if (limit <= doc.entries[i].begin) return false;
    doc.entries[i].end = content_end(text, doc.entries[i].begin, limit, doc.entries[i].entry);
  }
  return true;
}

// The file written anew from `entries`, keeping only the comments and
// directives before its first content.
std::string rewrite_whole(const std::string& text, const std::vector<QueueEntry>& entries) {
  std::size_t end = 0;
  bool directive = false;
  bool document_start = false;
  while (end < text.size()) {
    HeaderLine kind = classify_header_line(line_at(text, end));
    if (kind == HeaderLine::other || (kind == HeaderLine::document_start && document_start)) break;
    directive = directive || kind == HeaderLine::directive;
    document_start = document_start || kind == HeaderLine::document_start;
    end = next_line(text, end);
  }
  bool crlf = uses_crlf(text);
  std::string out = text.substr(0, end);
  if (!out.empty() && out.back() != '\n') out += crlf ? "\r\n" : "\n";
  std::string body = directive && !document_start ? "---\n" : "";
  for (const auto& entry : entries) body += entry_to_yaml(entry, 0);
  return out + with_line_ends(body, crlf);
}

// True when the text holds nothing but comments, blank lines and at most one
// document start, so items can simply follow it.
bool content_free(const std::string& text) {
  int starts = 0;
  for (std::size_t pos = 0; pos < text.size(); pos = next_line(text, pos)) {
    HeaderLine kind = classify_header_line(line_at(text, pos));
    if (kind == HeaderLine::other) return false;
    if (kind == HeaderLine::document_start && ++starts > 1) return false;
  }
  return true;
}

// The items text as it can be pasted after the queue's entries, or nullopt
// when it has a layout of its own (flow style, indentation, markers).
std::optional<std::string> pastable_items(const QueueDocument& added) {
  if (!added.block_style || added.entries.empty() || added.entries.front().indent != 0)
    return std::nullopt;
  if (bom_size(added.text) != 0) return std::nullopt;
  for (std::size_t pos = 0; pos < added.entries.front().begin; pos = next_line(added.text, pos))
    if (!blank_or_comment(line_at(added.text, pos))) return std::nullopt;
  if (find_document_end(added.text, added.entries.back().end) != added.text.size())
    return std::nullopt;
  return normalized_lines(added.text);
}

std::string insert_items(const QueueDocument& doc, const std::string& items) {
  const std::string& text = doc.text;
  std::size_t at =
      doc.entries.empty() ? text.size() : find_document_end(text, doc.entries.back().end);
  bool crlf = uses_crlf(text);
  std::string out = text.substr(0, at);
  if (!out.empty() && out.back() != '\n') out += crlf ? "\r\n" : "\n";
  int indent = doc.entries.empty() ? 0 : doc.entries.front().indent;
  out += with_line_ends(indented(items, indent), crlf);
  out.append(text, at, k_npos);
  return out;
}

}  // namespace

QueueDocument parse_queue_document(std::string text, const std::string& path) {
  QueueDocument doc;
  doc.path = path;
  doc.text = std::move(text);
  YAML::Node root = load_root(doc.text, path);
  std::vector<QueueEntry> entries = parse_entries(root, path);
  if (entries.empty()) {
    doc.block_style = !root || !root.IsSequence() || root.Style() != YAML::EmitterStyle::Flow;
    return doc;
  }
  doc.block_style = root.Style() != YAML::EmitterStyle::Flow;
  doc.entries.reserve(entries.size());
  for (auto& entry : entries) doc.entries.push_back(EntrySpan{std::move(entry)});
  if (doc.block_style && !locate_spans(doc, root)) doc.block_style = false;
  return doc;
}

std::optional<JobSpec> peek_first_job(const QueueDocument& doc) {
  if (doc.entries.empty()) return std::nullopt;
  return first_job(doc.entries.front().entry);
}

std::string text_without_first_job(const QueueDocument& doc) {
  if (doc.entries.empty()) return doc.text;
  std::vector<QueueEntry> expected = remainder_after_first(doc.entries.front().entry);
  std::size_t remainder_count = expected.size();
  for (std::size_t i = 1; i < doc.entries.size(); ++i) expected.push_back(doc.entries[i].entry);
  if (doc.block_style) {
    const EntrySpan& first = doc.entries.front();
    std::string replacement;
    for (std::size_t i = 0; i < remainder_count; ++i)
      replacement += entry_to_yaml(expected[i], first.indent);
    replacement = with_line_ends(replacement, uses_crlf(doc.text, first.begin));
    // Comments right after the entry, indented deeper than its `-`, would
    // run into a block scalar that now ends the replacement; then they go
    // with the entry.
    std::vector<std::size_t> ends = {first.end};
    std::size_t deeper_end = deeper_comments_end(doc.text, first);
    if (deeper_end != first.end) ends.push_back(deeper_end);
    for (std::size_t end : ends) {
      std::string text = doc.text.substr(0, first.begin) + replacement;
      text.append(doc.text, end, k_npos);
      if (holds_entries(text, expected)) return text;
    }
  }
  return rewrite_whole(doc.text, expected);
}

std::string text_with_appended(const QueueDocument& doc, const std::string& items) {
  QueueDocument added = parse_queue_document(items, "jobs to add");
  if (added.entries.empty()) return doc.text;
  std::vector<QueueEntry> expected;
  expected.reserve(doc.entries.size() + added.entries.size());
  for (const auto& span : doc.entries) expected.push_back(span.entry);
  std::string generated;
  for (const auto& span : added.entries) {
    expected.push_back(span.entry);
    generated += entry_to_yaml(span.entry, 0);
  }
  bool appendable = doc.block_style && (!doc.entries.empty() || content_free(doc.text));
  if (appendable) {
    if (std::optional<std::string> pasted = pastable_items(added)) {
      std::string text = insert_items(doc, *pasted);
      if (holds_entries(text, expected)) return text;
    }
    std::string text = insert_items(doc, generated);
    if (holds_entries(text, expected)) return text;
  }
  return rewrite_whole(doc.text, expected);
}

// ---------------------------------------------------------------------------
// FrontTaker

namespace {

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

// The entries `text` holds on its own, or nullopt when it does not parse.
std::optional<std::vector<QueueEntry>> parse_fragment(const std::string& text) {
  try {
    return parse_entries(load_root(text, ""), "");
  } catch (const std::exception&) {
    return std::nullopt;
  }
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

void FrontTaker::take() {
  if (!take_fast()) take_slow();
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
    parsed = parse_fragment(window);
    if (!parsed || parsed->size() != expected.size()) return false;
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (!same_entry((*parsed)[i], expected[i])) return false;
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

void FrontTaker::take_slow() {
  QueueDocument current = materialize();
  *this = FrontTaker(parse_queue_document(text_without_first_job(current), current.path));
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
