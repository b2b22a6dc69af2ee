// Private to the queue area: the lines of a queue file's text, as the
// queue's editors see them (line starts, line ends kept as written, the
// comments and directives that may come before the top-level list).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace runner {

// The length of a UTF-8 byte order mark at the start of `text` (0 or 3).
std::size_t bom_size(const std::string& text);

// Start of the line holding byte `pos`.
std::size_t line_start(const std::string& text, std::size_t pos);

// Start of the line after the one holding `pos` (or the end of the text).
std::size_t next_line(const std::string& text, std::size_t pos);

// Start of the line that ends just before `cut` (a line start or the end).
std::size_t previous_line(const std::string& text, std::size_t cut);

// The line at `begin` without its line break, and without a BOM at offset 0.
std::string_view line_at(const std::string& text, std::size_t begin);

// `line` without the blanks around it.
std::string_view trimmed(std::string_view line);

bool blank_or_comment(std::string_view line);

// Whether `pos` is past the end of `text` or at white space.
bool is_separator(std::string_view text, std::size_t pos);

// `---` or `...` at the start of a line, alone or followed by white space.
bool is_marker_line(std::string_view line, std::string_view marker);

// A line that may come before the top-level list: blank, comment, `%`
// directive or the `---` document start (with at most a comment after it).
enum class HeaderLine { blank_or_comment, directive, document_start, other };

HeaderLine classify_header_line(std::string_view line);

// Whether the first line break at or after `from` is "\r\n".
bool uses_crlf(const std::string& text, std::size_t from = 0);

// `text` with every '\n' written "\r\n" when `crlf`.
std::string with_line_ends(const std::string& text, bool crlf);

// Line breaks as '\n', with a final one.
std::string normalized_lines(const std::string& text);

// Every line that is not empty indented by `indent` spaces.
std::string indented(const std::string& text, int indent);

}  // namespace runner
