// Text helpers for assertions (see text.h).
#include "support/text.h"

namespace runner::testing {

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

bool is_job_note(const std::string& line) {
  std::size_t text = line.find("] === #");
  return text != std::string::npos && line.size() >= 4 &&
         line.compare(line.size() - 4, 4, " ===") == 0;
}

std::string job_lines(const std::string& out) {
  std::string kept;
  std::size_t begin = 0;
  while (begin < out.size()) {
    std::size_t end = out.find('\n', begin);
    end = end == std::string::npos ? out.size() : end + 1;
    std::string line = out.substr(begin, end - begin);
    std::string bare = line.back() == '\n' ? line.substr(0, line.size() - 1) : line;
    if (!is_job_note(bare)) kept += line;
    begin = end;
  }
  return kept;
}

}  // namespace runner::testing
