#include "runner/ui/line_wrap.h"

namespace runner {

namespace {

// The length in bytes of the unit that starts at `at`: an escape sequence,
// or one character with its continuation bytes.
std::size_t unit_length(std::string_view text, std::size_t at) {
  if (text[at] == '\x1b' && at + 1 < text.size() && text[at + 1] == '[') {
    std::size_t end = at + 2;
    while (end < text.size() && !(text[end] >= 0x40 && text[end] <= 0x7e)) ++end;
    return end < text.size() ? end - at + 1 : text.size() - at;
  }
  std::size_t end = at + 1;
  while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
  return end - at;
}

// Columns the unit at `at` takes when it starts at column `column`.
std::size_t unit_columns(std::string_view text, std::size_t at, std::size_t column) {
  if (text[at] == '\x1b') return 0;
  if (text[at] == '\t') return 8 - column % 8;
  return 1;
}

}  // namespace

std::size_t display_columns(std::string_view text) {
  std::size_t columns = 0;
  for (std::size_t at = 0; at < text.size(); at += unit_length(text, at))
    columns += unit_columns(text, at, columns);
  return columns;
}

std::string pad_to_columns(std::string_view text, std::size_t width) {
  std::string padded(text);
  std::size_t columns = display_columns(text);
  if (columns < width) padded.append(width - columns, ' ');
  return padded;
}

std::vector<std::string_view> wrap_line(std::string_view line, std::size_t columns) {
  if (columns == 0) return {line};
  std::vector<std::string_view> pieces;
  std::size_t begin = 0;
  std::size_t used = 0;
  for (std::size_t at = 0; at < line.size();) {
    std::size_t length = unit_length(line, at);
    std::size_t width = unit_columns(line, at, used);
    if (used + width > columns && at > begin) {
      pieces.push_back(line.substr(begin, at - begin));
      begin = at;
      used = 0;
      width = unit_columns(line, at, used);
    }
    used += width;
    at += length;
  }
  pieces.push_back(line.substr(begin));
  return pieces;
}

}  // namespace runner
