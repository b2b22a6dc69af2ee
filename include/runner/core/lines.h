// The lines of a text, one at a time, without their '\n' (a last line
// without one included), for the small parsers of what commands print.
#pragma once

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

}  // namespace runner
