// queue.yaml as text with the byte span of every top-level entry. Consuming
// a job splices new text over the first entry's span only; appending adds
// text after the last entry. Every result is parsed again and compared with
// the entries it must hold; should a splice ever not give them, the file is
// rewritten whole from its entries instead. Pure.
#include "runner/queue/queue_document.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "queue_entries.h"
#include "text_lines.h"

namespace runner {

namespace {

constexpr std::size_t k_npos = std::string::npos;

// True when `text` parses to exactly `expected`.
bool holds_entries(const std::string& text, const std::vector<QueueEntry>& expected) {
  std::optional<std::vector<QueueEntry>> entries = entries_of(text);
  return entries && same_entries(*entries, expected);
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
  std::optional<std::vector<QueueEntry>> entries = entries_of(text.substr(begin, end - begin));
  return entries && entries->size() == 1 && same_entry(entries->front(), entry);
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

Result<QueueDocument> parse_queue_document(std::string text, const std::string& path) {
  QueueDocument doc;
  doc.path = path;
  doc.text = std::move(text);
  Result<YAML::Node> parsed_root = load_queue_root(doc.text, path);
  if (!parsed_root) return parsed_root.status();
  const YAML::Node& root = *parsed_root;
  Result<std::vector<QueueEntry>> parsed_entries = parse_entries(root, path);
  if (!parsed_entries) return parsed_entries.status();
  std::vector<QueueEntry>& entries = *parsed_entries;
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

std::string text_with_appended(const QueueDocument& doc, const QueueDocument& added) {
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

}  // namespace runner
