// Replacing the queue file while keeping lock-free appends (see
// queue_replacement.h).
#include "queue_replacement.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>
#include <utility>

#include "file_io.h"
#include "own_changes.h"

namespace runner {

using file_io::io_error;

std::optional<HeldQueueFile> HeldQueueFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    throw io_error(errno, "cannot read " + path);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    int error = errno;
    ::close(fd);
    throw io_error(error, "cannot read " + path);
  }
  std::string text;
  try {
    text = file_io::read_from(fd, 0, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return HeldQueueFile(fd, std::move(text), info.st_dev, info.st_ino);
}

HeldQueueFile::HeldQueueFile(int fd, std::string text, dev_t device, ino_t inode)
    : m_fd(fd),
      m_text(std::move(text)),
      m_device(device),
      m_inode(inode),
      m_carried(static_cast<off_t>(m_text.size())) {}

HeldQueueFile::HeldQueueFile(HeldQueueFile&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)),
      m_text(std::move(other.m_text)),
      m_device(other.m_device),
      m_inode(other.m_inode),
      m_carried(other.m_carried) {}

HeldQueueFile& HeldQueueFile::operator=(HeldQueueFile&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = std::exchange(other.m_fd, -1);
    m_text = std::move(other.m_text);
    m_device = other.m_device;
    m_inode = other.m_inode;
    m_carried = other.m_carried;
  }
  return *this;
}

HeldQueueFile::~HeldQueueFile() {
  if (m_fd >= 0) ::close(m_fd);
}

bool HeldQueueFile::only_appended_to(const std::string& path) const {
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0) return false;
  if (named.st_dev != m_device || named.st_ino != m_inode) return false;
  return file_io::read_from(m_fd, 0, path).starts_with(m_text);
}

std::size_t HeldQueueFile::carry_late_appends(const std::string& path) {
  std::string late = file_io::read_from(m_fd, m_carried, path);
  if (late.empty()) return 0;
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw io_error(errno, "cannot append to " + path);
  try {
    file_io::write_all(fd, late, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  m_carried += static_cast<off_t>(late.size());
  return late.size();
}

bool replace_keeping_appends(HeldQueueFile& held, const std::string& path, const std::string& text,
                             bool sync_directory) {
  std::string temporary = write_temporary(path, text);
  bool unchanged = false;
  try {
    unchanged = held.only_appended_to(path);
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  if (!unchanged) {
    ::unlink(temporary.c_str());
    return false;
  }
  commit_temporary(temporary, path, sync_directory);
  // From here on a write to the old file reaches no one but `held`.
  held.carry_late_appends(path);
  return true;
}

std::string write_temporary(const std::string& path, const std::string& text) {
  std::filesystem::path target(path);
  std::string directory = file_io::directory_of(path);
  struct stat old {};
  bool replacing = ::stat(path.c_str(), &old) == 0;
  static std::mt19937_64 random{std::random_device{}()};
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    temporary = fmt::format("{}/.{}.{}.{:x}.tmp", directory, target.filename().string(), ::getpid(),
                            random());
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt > 100))
      throw io_error(errno, "cannot create a file beside " + path);
  }
  try {
    if (replacing) {
      if (::fchmod(fd, old.st_mode & 07777) != 0)
        throw io_error(errno, "cannot chmod " + temporary);
      // Only root may give the file back to another owner; others keep theirs.
      if ((old.st_uid != ::geteuid() || old.st_gid != ::getegid()) &&
          ::fchown(fd, old.st_uid, old.st_gid) != 0) {
      }
    }
    file_io::write_all(fd, text, temporary);
    if (::fsync(fd) != 0) throw io_error(errno, "cannot sync " + temporary);
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    throw io_error(error, "cannot write " + temporary);
  }
  return temporary;
}

void commit_temporary(const std::string& temporary, const std::string& path, bool sync) {
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    throw io_error(error, "cannot replace " + path);
  }
  own_changes::note_queue_replaced(path);
  if (sync) file_io::sync_directory(file_io::directory_of(path));
}

}  // namespace runner
