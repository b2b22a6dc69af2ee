// FailingFileSystem: the real calls, with the failures a test asked for.
#include "support/failing_file_system.h"

#include <algorithm>
#include <cerrno>

namespace runner::testing {

void FailingFileSystem::fail(Operation operation, std::string path_part, int error,
                             std::size_t bytes_before) {
  m_failures[operation] = Failure{std::move(path_part), error, bytes_before};
}

FailingFileSystem::Failure* FailingFileSystem::failure(Operation operation,
                                                       const std::string& path) {
  auto found = m_failures.find(operation);
  if (found == m_failures.end() || path.find(found->second.path_part) == std::string::npos)
    return nullptr;
  return &found->second;
}

int FailingFileSystem::fail_call(const Failure& failure) {
  ++m_failed_calls;
  errno = failure.error;
  return -1;
}

FileDescriptor FailingFileSystem::open(const std::string& path, int flags, mode_t mode) {
  if (Failure* open_failure = failure(Operation::open, path)) {
    static_cast<void>(fail_call(*open_failure));
    return FileDescriptor();
  }
  FileDescriptor fd = m_real.open(path, flags, mode);
  if (fd.valid()) m_paths[fd.get()] = path;
  return fd;
}

ssize_t FailingFileSystem::write(int fd, const void* data, std::size_t size) {
  Failure* write_failure = failure(Operation::write, m_paths[fd]);
  if (!write_failure) return m_real.write(fd, data, size);
  if (write_failure->bytes_before == 0) return fail_call(*write_failure);
  std::size_t fits = std::min(size, write_failure->bytes_before);
  ssize_t written = m_real.write(fd, data, fits);
  if (written > 0) write_failure->bytes_before -= static_cast<std::size_t>(written);
  return written;
}

int FailingFileSystem::fsync(int fd) {
  if (Failure* sync_failure = failure(Operation::fsync, m_paths[fd]))
    return fail_call(*sync_failure);
  return m_real.fsync(fd);
}

int FailingFileSystem::fdatasync(int fd) {
  if (Failure* sync_failure = failure(Operation::fsync, m_paths[fd]))
    return fail_call(*sync_failure);
  return m_real.fdatasync(fd);
}

int FailingFileSystem::rename(const std::string& from, const std::string& to) {
  Failure* rename_failure = failure(Operation::rename, from);
  if (!rename_failure) rename_failure = failure(Operation::rename, to);
  if (rename_failure) return fail_call(*rename_failure);
  return m_real.rename(from, to);
}

ssize_t FailingFileSystem::read(int fd, void* buffer, std::size_t size) {
  return m_real.read(fd, buffer, size);
}

ssize_t FailingFileSystem::pread(int fd, void* buffer, std::size_t size, off_t offset) {
  return m_real.pread(fd, buffer, size, offset);
}

int FailingFileSystem::fstat(int fd, struct stat* info) { return m_real.fstat(fd, info); }

int FailingFileSystem::stat(const std::string& path, struct stat* info) {
  return m_real.stat(path, info);
}

off_t FailingFileSystem::lseek(int fd, off_t offset, int whence) {
  return m_real.lseek(fd, offset, whence);
}

int FailingFileSystem::ftruncate(int fd, off_t length) { return m_real.ftruncate(fd, length); }

int FailingFileSystem::fchmod(int fd, mode_t mode) { return m_real.fchmod(fd, mode); }

int FailingFileSystem::fchown(int fd, uid_t owner, gid_t group) {
  return m_real.fchown(fd, owner, group);
}

int FailingFileSystem::unlink(const std::string& path) { return m_real.unlink(path); }
int FailingFileSystem::mkdir(const std::string& path, mode_t mode) {
  return m_real.mkdir(path, mode);
}

void FailingFileSystem::start_writeback(int fd, off_t offset, off_t length) {
  m_real.start_writeback(fd, offset, length);
}

void FailingFileSystem::drop_cache(int fd, off_t offset, off_t length) {
  m_real.drop_cache(fd, offset, length);
}

void FailingFileSystem::reserve(int fd, off_t offset, off_t length) {
  m_real.reserve(fd, offset, length);
}

}  // namespace runner::testing
