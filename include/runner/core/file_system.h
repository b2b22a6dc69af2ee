// The file operations that write users' files — the journal, the job logs,
// the queue — behind a small interface, as LevelDB's Env does it: the real
// POSIX calls by default, and in a test one that fails on demand (a full
// disk on write, an I/O error on fsync), so that what a failure leaves on
// disk and what it reports can be tested without filling a disk.
// Each call is the POSIX call of the same name: it returns what that
// returns and sets errno as it does. Results are [[nodiscard]]: a failure
// that nobody reads is data lost. FileDescriptor owns a descriptor.
// Threading: the real file system may be used from any thread.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runner/core/status.h"

namespace runner {

// An open file descriptor, closed when this goes away. Move-only.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : m_fd(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept;
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const { return m_fd; }
  bool valid() const { return m_fd >= 0; }
  // Closes it now: 0, or -1 with errno (a write the file system had
  // deferred failed). The descriptor is gone either way.
  [[nodiscard]] int close();

 private:
  int m_fd = -1;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Not valid, with errno set, when the file cannot be opened.
  [[nodiscard]] virtual FileDescriptor open(const std::string& path, int flags,
                                            mode_t mode = 0) = 0;
  [[nodiscard]] virtual ssize_t read(int fd, void* buffer, std::size_t size) = 0;
  [[nodiscard]] virtual ssize_t pread(int fd, void* buffer, std::size_t size, off_t offset) = 0;
  [[nodiscard]] virtual ssize_t write(int fd, const void* data, std::size_t size) = 0;
  [[nodiscard]] virtual int fsync(int fd) = 0;
  [[nodiscard]] virtual int fdatasync(int fd) = 0;
  [[nodiscard]] virtual int fstat(int fd, struct stat* info) = 0;
  [[nodiscard]] virtual int stat(const std::string& path, struct stat* info) = 0;
  [[nodiscard]] virtual off_t lseek(int fd, off_t offset, int whence) = 0;
  [[nodiscard]] virtual int ftruncate(int fd, off_t length) = 0;
  [[nodiscard]] virtual int fchmod(int fd, mode_t mode) = 0;
  [[nodiscard]] virtual int fchown(int fd, uid_t owner, gid_t group) = 0;
  [[nodiscard]] virtual int rename(const std::string& from, const std::string& to) = 0;
  [[nodiscard]] virtual int unlink(const std::string& path) = 0;
  [[nodiscard]] virtual int mkdir(const std::string& path, mode_t mode) = 0;
  // Page-cache hints for a long file written behind (sync_file_range with
  // SYNC_FILE_RANGE_WRITE, posix_fadvise with POSIX_FADV_DONTNEED): their
  // failure only means pages stay cached, so they return nothing.
  virtual void start_writeback(int fd, off_t offset, off_t length) = 0;
  virtual void drop_cache(int fd, off_t offset, off_t length) = 0;
  // Reserves disk blocks past the file's end (fallocate with
  // FALLOC_FL_KEEP_SIZE: its size stays), so writes there need not
  // allocate them; ftruncate to the size releases what is left. Failure
  // (a file system without it, a full disk) only means no reservation.
  virtual void reserve(int fd, off_t offset, off_t length) = 0;
};

// The real POSIX file system: the default of everything that takes one.
FileSystem& real_file_system();

// Writes `text` as the whole of `path`: into a temporary file beside it,
// then renamed over it, so a reader sees the old file or the new one. Not
// synced: for files that can be made again (caches, indexes). The error
// names the file and the reason.
Status replace_file(FileSystem& files, const std::string& path, std::string_view text);

// The whole of a file, or its first `max_bytes` bytes where it is longer;
// nullopt when it cannot be opened or read.
std::optional<std::string> read_whole_file(FileSystem& files, const std::string& path,
                                           std::size_t max_bytes = SIZE_MAX);

}  // namespace runner
