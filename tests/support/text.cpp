// Text helpers for assertions (see text.h).
#include "support/text.h"

namespace runner::testing {

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace runner::testing
