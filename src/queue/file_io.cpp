// The queue area's file helpers (see file_io.h).
#include "file_io.h"

#include <fcntl.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

namespace runner::file_io {

Status io_failure(int error, const std::string& what) {
  return Status::error(what + ": " + std::generic_category().message(error));
}

Status write_all(FileSystem& files, int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = files.write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_failure(errno, "cannot write " + path);
    done += static_cast<std::size_t>(n);
  }
  return Status();
}

Result<std::string> read_from(FileSystem& files, int fd, off_t offset, const std::string& path) {
  std::string text;
  char buffer[65536];
  while (true) {
    ssize_t n = files.pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_failure(errno, "cannot read " + path);
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
    offset += n;
  }
}

Result<std::string> read_first(FileSystem& files, int fd, std::size_t size,
                               const std::string& path) {
  std::string text(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    ssize_t n = files.pread(fd, text.data() + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_failure(errno, "cannot read " + path);
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  text.resize(done);
  return text;
}

std::string directory_of(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

void sync_directory(FileSystem& files, const std::string& directory) {
  FileDescriptor fd = files.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd.valid()) static_cast<void>(files.fsync(fd.get()));
}

}  // namespace runner::file_io
