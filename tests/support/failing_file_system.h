// A FileSystem that does the real thing, except that the operations a test
// names fail, on the files whose path holds a given part, with a given
// errno: a disk that fills up after so many bytes (ENOSPC on write), one
// that cannot sync (EIO on fsync), a rename that is refused. Like LevelDB's
// fault-injecting SpecialEnv.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "runner/core/file_system.h"

namespace runner::testing {

class FailingFileSystem : public FileSystem {
 public:
  enum class Operation { open, write, fsync, rename };

  // From now on `operation` fails with `error` on files whose path contains
  // `path_part` (for a rename, either name). A write may first put
  // `bytes_before` more bytes on such files (the last of those writes
  // cut short there), as a disk that fills up does.
  void fail(Operation operation, std::string path_part, int error, std::size_t bytes_before = 0);
  // Every operation succeeds again, as when space returns.
  void heal() { m_failures.clear(); }
  // How many calls were failed.
  int failed_calls() const { return m_failed_calls; }

  FileDescriptor open(const std::string& path, int flags, mode_t mode = 0) override;
  ssize_t read(int fd, void* buffer, std::size_t size) override;
  ssize_t pread(int fd, void* buffer, std::size_t size, off_t offset) override;
  ssize_t write(int fd, const void* data, std::size_t size) override;
  int fsync(int fd) override;
  int fdatasync(int fd) override;
  int fstat(int fd, struct stat* info) override;
  int stat(const std::string& path, struct stat* info) override;
  off_t lseek(int fd, off_t offset, int whence) override;
  int ftruncate(int fd, off_t length) override;
  int fchmod(int fd, mode_t mode) override;
  int fchown(int fd, uid_t owner, gid_t group) override;
  int rename(const std::string& from, const std::string& to) override;
  int unlink(const std::string& path) override;
  int mkdir(const std::string& path, mode_t mode) override;
  void start_writeback(int fd, off_t offset, off_t length) override;
  void drop_cache(int fd, off_t offset, off_t length) override;
  void reserve(int fd, off_t offset, off_t length) override;

 private:
  struct Failure {
    std::string path_part;
    int error = 0;
    std::size_t bytes_before = 0;
  };

  // The failure that applies to `operation` on `path`, if any.
  Failure* failure(Operation operation, const std::string& path);
  // Sets errno to the failure's error and counts the call; returns -1.
  int fail_call(const Failure& failure);

  FileSystem& m_real = real_file_system();
  std::map<Operation, Failure> m_failures;
  std::map<int, std::string> m_paths;  // of the descriptors opened here
  int m_failed_calls = 0;
};

}  // namespace runner::testing
