// See printable.h.
#include "runner/core/printable.h"

#include <fmt/format.h>

namespace runner {

namespace {

// The length of the UTF-8 sequence at the front of `text` and its code
// point; 0 when it is not one (a stray byte, a cut, overlong or surrogate
// sequence).
std::size_t utf8_sequence(std::string_view text, char32_t& code_point) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  std::size_t length = lead >= 0xF0 && lead <= 0xF4   ? 4
                       : lead >= 0xE0                 ? 3
                       : lead >= 0xC2 && lead <= 0xDF ? 2
                                                      : 0;
  if (length == 0 || text.size() < length) return 0;
  code_point = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  bool overlong = (length == 3 && code_point < 0x800) || (length == 4 && code_point < 0x10000);
  bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  if (overlong || surrogate || code_point > 0x10FFFF) return 0;
  return length;
}

// C1 controls, the line and paragraph separators (line breaks to YAML
// 1.1), and the marks and overrides that change the direction of text.
bool hides_or_breaks(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029 || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

std::string printable(std::string_view said) {
  std::string out;
  out.reserve(said.size());
  while (!said.empty()) {
    unsigned char c = static_cast<unsigned char>(said.front());
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      said.remove_prefix(1);
      continue;
    }
    char32_t code_point = 0;
    std::size_t length = c >= 0x80 ? utf8_sequence(said, code_point) : 0;
    if (length > 0 && !hides_or_breaks(code_point))
      out.append(said.substr(0, length));
    else if (length > 0)
      out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code_point));
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else
      out += fmt::format("\\x{:02x}", c);
    said.remove_prefix(length > 0 ? length : 1);
  }
  return out;
}

}  // namespace runner
