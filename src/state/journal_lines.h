// Reading a journal file line by line, for the writer (which looks for the
// last job id) and the readers.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "runner/core/file_system.h"
#include "runner/core/result.h"

namespace runner {

// The system's reason for the last call that failed, as errno says it.
inline std::string errno_text() { return std::strerror(errno); }

// Calls on_line(std::string_view) for every '\n'-terminated line of `fd`,
// from its current offset to the end, reading in fixed chunks. Returns the
// unterminated tail (empty when the file ends with '\n'), or why `path`
// could not be read.
template <typename OnLine>
Result<std::string> for_each_line(FileSystem& files, int fd, const std::string& path,
                                  OnLine on_line) {
  constexpr std::size_t k_read_chunk = 1 << 20;
  std::string carry;
  std::string chunk(k_read_chunk, '\0');
  for (;;) {
    ssize_t n = files.read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::error("cannot read " + path + ": " + errno_text());
    if (n == 0) break;
    std::string_view data(chunk.data(), static_cast<std::size_t>(n));
    for (;;) {
      std::size_t eol = data.find('\n');
      if (eol == std::string_view::npos) break;
      if (carry.empty()) {
        on_line(data.substr(0, eol));
      } else {
        carry.append(data.substr(0, eol));
        on_line(std::string_view(carry));
        carry.clear();
      }
      data.remove_prefix(eol + 1);
    }
    carry.append(data);
  }
  return carry;
}

}  // namespace runner
