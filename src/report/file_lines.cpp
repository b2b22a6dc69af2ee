// Reading a file's lines a chunk at a time, from its start or its end.
#include "runner/report/file_lines.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace runner {

namespace {

constexpr std::size_t k_chunk = 64 * 1024;

Status read_error(const std::string& path) {
  return Status::error(fmt::format("{}: {}", path, std::strerror(errno)));
}

// A regular file open for reading, and its size then.
struct OpenFile {
  FileDescriptor fd;
  std::size_t size = 0;
};

// `path` opened for reading; a FIFO does not block the open, a link is not
// followed.
Result<OpenFile> open_for_reading(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd.valid()) return read_error(path);
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) return read_error(path);
  if (!S_ISREG(status.st_mode)) return Status::error(path + ": not a regular file");
  return OpenFile{std::move(fd), static_cast<std::size_t>(status.st_size)};
}

// Holds something other than spaces and tabs, a '\r' at its end aside.
bool is_filled(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line.find_first_not_of(" \t") != std::string_view::npos;
}

}  // namespace

LinesFromEnd::LinesFromEnd(FileDescriptor fd, std::string path, std::size_t size,
                           std::size_t line_limit)
    : m_fd(std::move(fd)), m_path(std::move(path)), m_line_limit(line_limit), m_size(size), m_unread(size) {}

Result<LinesFromEnd> LinesFromEnd::open(const std::string& path, std::size_t line_limit) {
  Result<OpenFile> file = open_for_reading(path);
  if (!file) return file.status();
  LinesFromEnd lines(std::move(file->fd), path, file->size, line_limit);
  // The last chunk read at once (a short log's only read); the '\n' that
  // ends the file ends its last line: no empty line after it.
  if (Status read = lines.read_before(k_chunk); !read.ok()) return read;
  if (!lines.m_pending.empty() && lines.m_pending.back() == '\n') lines.m_pending.pop_back();
  return lines;
}

Status LinesFromEnd::read_before(std::size_t bytes) {
  std::size_t count = std::min(bytes, m_unread);
  std::string chunk(count, '\0');
  for (std::size_t done = 0; done < count;) {
    ssize_t got = ::pread(m_fd.get(), chunk.data() + done, count - done,
                          static_cast<off_t>(m_unread - count + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return read_error(m_path);
    if (got == 0) return Status::error(m_path + ": it shrank while it was read");
    done += static_cast<std::size_t>(got);
  }
  m_pending.insert(0, chunk);
  m_unread -= count;
  return Status();
}

Result<std::optional<FileLine>> LinesFromEnd::previous() {
  if (m_done) return std::optional<FileLine>();
  bool too_long = false;  // the line's end was read, and dropped
  while (true) {
    std::size_t cut = m_pending.rfind('\n');
    if (cut != std::string::npos || m_unread == 0) {
      std::size_t begin = cut == std::string::npos ? 0 : cut + 1;
      FileLine line;
      line.offset = m_unread + begin;
      line.too_long = too_long || m_pending.size() - begin > m_line_limit;
      if (!line.too_long) line.text = m_pending.substr(begin);
      m_pending.resize(cut == std::string::npos ? 0 : cut);
      m_done = cut == std::string::npos;
      return std::optional<FileLine>(std::move(line));
    }
    if (m_pending.size() > m_line_limit) {
      too_long = true;
      m_pending.clear();
    }
    // Twice as much each time a line goes on: a long line costs its length.
    if (Status read = read_before(std::max(k_chunk, m_pending.size())); !read.ok()) return read;
  }
}

Result<std::optional<FileLine>> first_filled_line(const std::string& path, std::size_t line_limit) {
  Result<OpenFile> file = open_for_reading(path);
  if (!file) return file.status();
  FileLine line;
  std::string chunk(k_chunk, '\0');
  while (true) {
    ssize_t got = ::read(file->fd.get(), chunk.data(), chunk.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return read_error(path);
    if (got == 0) return is_filled(line.text) ? std::optional<FileLine>(line) : std::nullopt;
    std::string_view read(chunk.data(), static_cast<std::size_t>(got));
    for (std::size_t end; (end = read.find('\n')) != std::string_view::npos;) {
      line.text.append(read.substr(0, end));
      if (is_filled(line.text)) return std::optional<FileLine>(line);
      line.offset += line.text.size() + 1;
      line.text.clear();
      read.remove_prefix(end + 1);
    }
    line.text.append(read);
    if (line.text.size() > line_limit)
      return Status::error(
          fmt::format("{}: its first line is longer than {} bytes", path, line_limit));
  }
}

Result<std::optional<FileLine>> last_filled_line(const std::string& path, std::size_t line_limit) {
  Result<LinesFromEnd> lines = LinesFromEnd::open(path, line_limit);
  if (!lines) return lines.status();
  while (true) {
    Result<std::optional<FileLine>> line = lines->previous();
    if (!line || !*line) return line;
    if ((*line)->too_long)
      return Status::error(
          fmt::format("{}: a line from its end is longer than {} bytes", path, line_limit));
    if (is_filled((*line)->text)) return line;
  }
}

}  // namespace runner
