// A text as one POSIX shell word (see runner/core/shell_quote.h). Pure.
#include "runner/core/shell_quote.h"

namespace runner {

std::string shell_quote(std::string_view text) {
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '\'';
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

}  // namespace runner
