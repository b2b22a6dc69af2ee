// The job logs of a state directory: their paths, and a log's tail for
// people (the last lines, without terminal escapes).
#include "runner/report/log_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <vector>

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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string();
  struct stat info {};
  std::string data;
  if (::fstat(fd, &info) == 0) {
    off_t size = info.st_size;
    off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
    // One byte more, to tell whether the window starts at a line.
    bool cut = from > 0;
    if (cut) --from;
    data.resize(static_cast<std::size_t>(size - from));
    std::size_t got = 0;
    while (got < data.size()) {
      ssize_t n = ::pread(fd, data.data() + got, data.size() - got, from + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    data.resize(got);
    // A cut first line is not a line.
    if (cut) {
      std::size_t eol = data.find_first_of("\r\n");
      if (eol != std::string::npos && data.compare(eol, 2, "\r\n") == 0) ++eol;
      data.erase(0, eol == std::string::npos ? data.size() : eol + 1);
    }
  }
  ::close(fd);

  std::string plain = strip_escapes(data);
  std::vector<std::string_view> lines;
  std::string_view rest(plain);
  while (!rest.empty()) {
    std::size_t eol = rest.find_first_of("\r\n");
    if (eol == std::string_view::npos) {
      lines.push_back(rest);
      break;
    }
    lines.push_back(rest.substr(0, eol));
    std::size_t skip = rest.compare(eol, 2, "\r\n") == 0 ? 2 : 1;
    rest.remove_prefix(eol + skip);
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string_view::npos)
    lines.pop_back();
  std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string tail;
  for (std::size_t i = first; i < lines.size(); ++i) tail.append(lines[i]).push_back('\n');
  return tail;
}

}  // namespace runner
