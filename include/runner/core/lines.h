// The lines of a text, one at a time, without their '\n' (a last line
// without one included), for the small parsers of what commands print.
#pragma once

#include <string>
#include <string_view>

namespace runner {

template <typename Each>
void for_each_line(std::string_view text, Each each) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    each(text.substr(begin, end - begin));
    begin = end + 1;
  }
}

// What a failed command said (its non-empty lines joined by "; ") on one
// line, only the last 600 bytes of it when longer.
inline std::string last_words(std::string_view output) {
  std::string said;
  for_each_line(output, [&](std::string_view line) {
    if (line.empty()) return;
    if (!said.empty()) said += "; ";
    said += line;
  });
  constexpr std::size_t k_kept = 600;
  return said.size() > k_kept ? "..." + said.substr(said.size() - k_kept) : said;
}

}  // namespace runner
