#include "empty_list.h"

#include <string_view>

#include "text_lines.h"

namespace runner::empty_list {

namespace {

// Where the first line that is not a header line begins, or npos.
std::size_t first_content(const std::string& text) {
  for (std::size_t pos = 0; pos < text.size(); pos = next_line(text, pos))
    if (classify_header_line(line_at(text, pos)) == HeaderLine::other) return pos;
  return std::string::npos;
}

}  // namespace

std::optional<std::string> blanked(const std::string& text) {
  std::size_t line = first_content(text);
  if (line == std::string::npos) return std::nullopt;
  std::string_view content = trimmed(line_at(text, line));
  if (!content.starts_with("[]") || !blank_or_comment(content.substr(2))) return std::nullopt;
  std::string out = text;
  out.replace(static_cast<std::size_t>(content.data() - text.data()), 2, "  ");
  return out;
}

std::string marked(const std::string& text) {
  if (first_content(text) != std::string::npos) return text;
  bool crlf = uses_crlf(text);
  std::string out = text;
  if (!out.empty() && out.back() != '\n') out += crlf ? "\r\n" : "\n";
  return out + (crlf ? "[]\r\n" : "[]\n");
}

}  // namespace runner::empty_list
