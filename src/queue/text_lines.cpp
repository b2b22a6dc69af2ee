#include "text_lines.h"

#include <algorithm>

namespace runner {

namespace {

constexpr std::string_view k_bom = "\xEF\xBB\xBF";
constexpr std::size_t k_npos = std::string::npos;

}  // namespace

std::size_t bom_size(const std::string& text) {
  return std::string_view(text).substr(0, k_bom.size()) == k_bom ? k_bom.size() : 0;
}

std::size_t line_start(const std::string& text, std::size_t pos) {
  if (pos == 0) return 0;
  std::size_t newline = text.rfind('\n', pos - 1);
  return newline == k_npos ? 0 : newline + 1;
}

std::size_t next_line(const std::string& text, std::size_t pos) {
  std::size_t newline = text.find('\n', pos);
  return newline == k_npos ? text.size() : newline + 1;
}

std::size_t previous_line(const std::string& text, std::size_t cut) {
  if (cut == 0) return 0;
  std::size_t last = cut - 1;
  if (text[last] == '\n') return last == 0 ? 0 : line_start(text, last);
  return line_start(text, cut);
}

std::string_view line_at(const std::string& text, std::size_t begin) {
  std::size_t end = text.find('\n', begin);
  if (end == k_npos) end = text.size();
  if (end > begin && text[end - 1] == '\r') --end;
  if (begin == 0) begin = std::min(bom_size(text), end);
  return std::string_view(text).substr(begin, end - begin);
}

std::string_view trimmed(std::string_view line) {
  std::size_t first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  std::size_t last = line.find_last_not_of(" \t");
  return line.substr(first, last - first + 1);
}

bool blank_or_comment(std::string_view line) {
  std::string_view text = trimmed(line);
  return text.empty() || text.front() == '#';
}

bool is_separator(std::string_view text, std::size_t pos) {
  return pos >= text.size() || text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r' ||
         text[pos] == '\n';
}

bool is_marker_line(std::string_view line, std::string_view marker) {
  return line.substr(0, 3) == marker && is_separator(line, 3);
}

HeaderLine classify_header_line(std::string_view line) {
  if (blank_or_comment(line)) return HeaderLine::blank_or_comment;
  if (line.front() == '%') return HeaderLine::directive;
  if (is_marker_line(line, "---") && blank_or_comment(line.substr(3)))
    return HeaderLine::document_start;
  return HeaderLine::other;
}

bool uses_crlf(const std::string& text, std::size_t from) {
  std::size_t newline = text.find('\n', from);
  return newline != k_npos && newline > 0 && text[newline - 1] == '\r';
}

std::string with_line_ends(const std::string& text, bool crlf) {
  if (!crlf) return text;
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

std::string normalized_lines(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 1);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) out += text[i];
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

std::string indented(const std::string& text, int indent) {
  if (indent == 0) return text;
  std::string pad(indent, ' ');
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = next_line(text, pos);
    if (text[pos] != '\n' && text[pos] != '\r') out += pad;
    out.append(text, pos, end - pos);
    pos = end;
  }
  return out;
}

}  // namespace runner
