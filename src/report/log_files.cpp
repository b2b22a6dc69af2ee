// The job logs of a state directory: their paths, and a log's tail for
// people (the last lines, without terminal escapes).
#include "runner/report/log_files.h"

#include <string_view>
#include <vector>

#include "runner/report/file_lines.h"
#include "runner/state/state_dir.h"

namespace runner {

namespace {

bool is_escape_final(unsigned char c) { return c >= 0x40 && c <= 0x7E; }

// `text` without terminal escape sequences (CSI, OSC and two-byte ones).
std::string strip_escapes(std::string_view text) {
  std::string plain;
  plain.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      plain.push_back(text[i]);
      continue;
    }
    if (i + 1 >= text.size()) break;
    char kind = text[i + 1];
    if (kind == '[') {
      std::size_t k = i + 2;
      while (k < text.size() && !is_escape_final(static_cast<unsigned char>(text[k]))) ++k;
      i = k;
    } else if (kind == ']') {
      std::size_t k = i + 2;
      while (k < text.size() && text[k] != '\a' && !(text[k] == '\x1b' && k + 1 < text.size())) ++k;
      i = k < text.size() && text[k] == '\x1b' ? k + 1 : k;
    } else {
      i += 1;
    }
  }
  return plain;
}

}  // namespace

std::string job_log_path(const std::string& state_dir, JobId id) {
  return logs_dir(state_dir) + "/" + std::to_string(id) + ".log";
}

std::string task_log_path(const std::string& state_dir, JobId id, int rank) {
  return logs_dir(state_dir) + "/" + std::to_string(id) + "." + std::to_string(rank) + ".log";
}

std::string log_tail(const std::string& path, std::size_t max_lines, std::size_t max_bytes) {
  // A line longer than the window starts before it: it is never shown.
  Result<LinesFromEnd> lines = LinesFromEnd::open(path, max_bytes);
  if (!lines) return std::string();
  std::size_t window_start = lines->size() > max_bytes ? lines->size() - max_bytes : 0;
  std::vector<std::string> last;  // from the log's end back
  while (last.size() < max_lines) {
    Result<std::optional<FileLine>> line = lines->previous();
    // A line the window starts inside is not a line.
    if (!line || !*line || (*line)->too_long || (*line)->offset < window_start) break;
    std::string plain = strip_escapes((*line)->text);
    if (!plain.empty() && plain.back() == '\r') plain.pop_back();
    // '\r' ends a line too; the pieces from the last back.
    for (std::size_t end = plain.size(); last.size() < max_lines;) {
      std::size_t cut = end == 0 ? std::string::npos : plain.rfind('\r', end - 1);
      std::size_t begin = cut == std::string::npos ? 0 : cut + 1;
      std::string_view piece = std::string_view(plain).substr(begin, end - begin);
      // Blank lines at the log's end are not shown.
      if (!last.empty() || piece.find_first_not_of(" \t") != std::string_view::npos)
        last.emplace_back(piece);
      if (cut == std::string::npos) break;
      end = cut;
    }
  }
  std::string tail;
  for (auto it = last.rbegin(); it != last.rend(); ++it) tail.append(*it).push_back('\n');
  return tail;
}

}  // namespace runner
