// FileDescriptor, and the real FileSystem: each call the POSIX one.
#include "runner/core/file_system.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace runner {

FileDescriptor::FileDescriptor(FileDescriptor&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)) {}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    static_cast<void>(close());
    m_fd = std::exchange(other.m_fd, -1);
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  // Whoever needs to know whether the close failed called close().
  static_cast<void>(close());
}

int FileDescriptor::close() {
  if (m_fd < 0) return 0;
  return ::close(std::exchange(m_fd, -1));
}

namespace {

class PosixFileSystem final : public FileSystem {
 public:
  FileDescriptor open(const std::string& path, int flags, mode_t mode) override {
    return FileDescriptor(::open(path.c_str(), flags, mode));
  }
  ssize_t read(int fd, void* buffer, std::size_t size) override { return ::read(fd, buffer, size); }
  ssize_t pread(int fd, void* buffer, std::size_t size, off_t offset) override {
    return ::pread(fd, buffer, size, offset);
  }
  ssize_t write(int fd, const void* data, std::size_t size) override {
    return ::write(fd, data, size);
  }
  int fsync(int fd) override { return ::fsync(fd); }
  int fdatasync(int fd) override { return ::fdatasync(fd); }
  int fstat(int fd, struct stat* info) override { return ::fstat(fd, info); }
  int stat(const std::string& path, struct stat* info) override {
    return ::stat(path.c_str(), info);
  }
  off_t lseek(int fd, off_t offset, int whence) override { return ::lseek(fd, offset, whence); }
  int ftruncate(int fd, off_t length) override { return ::ftruncate(fd, length); }
  int fchmod(int fd, mode_t mode) override { return ::fchmod(fd, mode); }
  int fchown(int fd, uid_t owner, gid_t group) override { return ::fchown(fd, owner, group); }
  int rename(const std::string& from, const std::string& to) override {
    return ::rename(from.c_str(), to.c_str());
  }
  int unlink(const std::string& path) override { return ::unlink(path.c_str()); }
  int mkdir(const std::string& path, mode_t mode) override { return ::mkdir(path.c_str(), mode); }
  void start_writeback(int fd, off_t offset, off_t length) override {
    ::sync_file_range(fd, offset, length, SYNC_FILE_RANGE_WRITE);
  }
  void drop_cache(int fd, off_t offset, off_t length) override {
    ::posix_fadvise(fd, offset, length, POSIX_FADV_DONTNEED);
  }
  void reserve(int fd, off_t offset, off_t length) override {
    ::fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length);
  }
};

}  // namespace

FileSystem& real_file_system() {
  static PosixFileSystem files;
  return files;
}

Status replace_file(FileSystem& files, const std::string& path, std::string_view text) {
  std::string temporary = fmt::format("{}.{}.tmp", path, ::getpid());
  auto failed = [&](const std::string& what) {
    Status status = Status::error(fmt::format("cannot {} {}: {}", what, temporary,
                                              std::strerror(errno)));
    static_cast<void>(files.unlink(temporary));
    return status;
  };
  {
    FileDescriptor fd = files.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (!fd.valid()) return failed("create");
    while (!text.empty()) {
      ssize_t n = files.write(fd.get(), text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n == 0) errno = ENOSPC;
        return failed("write");
      }
      text.remove_prefix(static_cast<std::size_t>(n));
    }
    if (fd.close() != 0) return failed("write");
  }
  if (files.rename(temporary, path) != 0) return failed("rename");
  return Status();
}

std::optional<std::string> read_whole_file(FileSystem& files, const std::string& path,
                                           std::size_t max_bytes) {
  FileDescriptor fd = files.open(path, O_RDONLY | O_CLOEXEC);
  if (!fd.valid()) return std::nullopt;
  std::string text;
  char buffer[65536];
  while (text.size() < max_bytes) {
    ssize_t n = files.read(fd.get(), buffer, std::min(sizeof buffer, max_bytes - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace runner
