// A file's lines read a chunk at a time, never the whole file at once: the
// header and the last row of a collected CSV, a long log's lines from its
// end back. Lines end at '\n'; a line longer than the limit is passed over
// (said, not held). Reading only; a symbolic link is not followed.
//
// Threading: none.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "runner/core/file_system.h"
#include "runner/core/result.h"

namespace runner {

// One line of a file, without its '\n'.
struct FileLine {
  std::string text;        // empty when too long
  std::size_t offset = 0;  // where it starts in the file
  bool too_long = false;   // longer than the reader's limit: passed over unread
};

// A file's lines from its end back.
class LinesFromEnd {
 public:
  // `path` opened, or why it cannot be ("x.log: No such file or directory").
  static Result<LinesFromEnd> open(const std::string& path, std::size_t line_limit);

  // The line before the one given last, the file's last line first (a '\n'
  // that ends the file ends that line); nullopt once the file's first line
  // was given. An error when reading fails.
  Result<std::optional<FileLine>> previous();

  // The file's size when it was opened.
  std::size_t size() const { return m_size; }

 private:
  LinesFromEnd(FileDescriptor fd, std::string path, std::size_t size, std::size_t line_limit);
  // The `bytes` before m_unread, read into the front of m_pending.
  Status read_before(std::size_t bytes);

  FileDescriptor m_fd;
  std::string m_path;
  std::size_t m_line_limit;
  std::size_t m_size;
  std::size_t m_unread;   // the file's bytes before this offset are not read yet
  std::string m_pending;  // the bytes from m_unread on that are not given yet
  bool m_done = false;
};

// The first line of `path` that holds something other than spaces and tabs
// (its '\r' before the '\n' left on), nullopt when there is none; an error
// when reading fails or the line is longer than `line_limit`.
Result<std::optional<FileLine>> first_filled_line(const std::string& path, std::size_t line_limit);

// The last such line of `path`, read from its end back; the same errors.
Result<std::optional<FileLine>> last_filled_line(const std::string& path, std::size_t line_limit);

}  // namespace runner
