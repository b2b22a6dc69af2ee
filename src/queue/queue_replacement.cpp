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

namespace runner {

using file_io::io_error;

std::optional<HeldQueueFile> HeldQueueFile::open(FileSystem& files, const std::string& path) {
  FileDescriptor fd = files.open(path, O_RDONLY | O_CLOEXEC);
  if (!fd.valid()) {
    if (errno == ENOENT) return std::nullopt;
    throw io_error(errno, "cannot read " + path);
  }
  struct stat info {};
  if (files.fstat(fd.get(), &info) != 0) throw io_error(errno, "cannot read " + path);
  std::string text = file_io::read_from(files, fd.get(), 0, path);
  return HeldQueueFile(files, std::move(fd), std::move(text), info.st_dev, info.st_ino);
}

HeldQueueFile::HeldQueueFile(FileSystem& files, FileDescriptor fd, std::string text, dev_t device,
                             ino_t inode)
    : m_files(&files),
      m_fd(std::move(fd)),
      m_text(std::move(text)),
      m_device(device),
      m_inode(inode),
      m_carried(static_cast<off_t>(m_text.size())) {}

bool HeldQueueFile::only_appended_to(const std::string& path) const {
  struct stat named {};
  if (m_files->stat(path, &named) != 0) return false;
  if (named.st_dev != m_device || named.st_ino != m_inode) return false;
  return file_io::read_from(*m_files, m_fd.get(), 0, path).starts_with(m_text);
}

std::size_t HeldQueueFile::carry_late_appends(const std::string& path) {
  std::string late = file_io::read_from(*m_files, m_fd.get(), m_carried, path);
  if (late.empty()) return 0;
  FileDescriptor fd = m_files->open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (!fd.valid()) throw io_error(errno, "cannot append to " + path);
  file_io::write_all(*m_files, fd.get(), late, path);
  m_carried += static_cast<off_t>(late.size());
  return late.size();
}

bool replace_keeping_appends(HeldQueueFile& held, const std::string& path, const std::string& text,
                             bool sync_directory) {
  FileSystem& files = held.files();
  std::string temporary = write_temporary(files, path, text);
  bool unchanged = false;
  try {
    unchanged = held.only_appended_to(path);
  } catch (...) {
    static_cast<void>(files.unlink(temporary));
    throw;
  }
  if (!unchanged) {
    static_cast<void>(files.unlink(temporary));
    return false;
  }
  commit_temporary(files, temporary, path, sync_directory);
  // From here on a write to the old file reaches no one but `held`.
  held.carry_late_appends(path);
  return true;
}

std::string write_temporary(FileSystem& files, const std::string& path, const std::string& text) {
  std::filesystem::path target(path);
  std::string directory = file_io::directory_of(path);
  struct stat old {};
  bool replacing = files.stat(path, &old) == 0;
  static std::mt19937_64 random{std::random_device{}()};
  std::string temporary;
  FileDescriptor fd;
  for (int attempt = 0; !fd.valid(); ++attempt) {
    temporary = fmt::format("{}/.{}.{}.{:x}.tmp", directory, target.filename().string(), ::getpid(),
                            random());
    fd = files.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (!fd.valid() && (errno != EEXIST || attempt > 100))
      throw io_error(errno, "cannot create a file beside " + path);
  }
  try {
    if (replacing) {
      if (files.fchmod(fd.get(), old.st_mode & 07777) != 0)
        throw io_error(errno, "cannot chmod " + temporary);
      // Only root may give the file back to another owner; others keep
      // theirs, so a failure here is no error.
      if (old.st_uid != ::geteuid() || old.st_gid != ::getegid())
        static_cast<void>(files.fchown(fd.get(), old.st_uid, old.st_gid));
    }
    file_io::write_all(files, fd.get(), text, temporary);
    if (files.fsync(fd.get()) != 0) throw io_error(errno, "cannot sync " + temporary);
    if (fd.close() != 0) throw io_error(errno, "cannot write " + temporary);
  } catch (...) {
    static_cast<void>(fd.close());
    static_cast<void>(files.unlink(temporary));
    throw;
  }
  return temporary;
}

void commit_temporary(FileSystem& files, const std::string& temporary, const std::string& path,
                      bool sync) {
  if (files.rename(temporary, path) != 0) {
    int error = errno;
    static_cast<void>(files.unlink(temporary));
    throw io_error(error, "cannot replace " + path);
  }
  if (sync) file_io::sync_directory(files, file_io::directory_of(path));
}

}  // namespace runner
