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

using file_io::io_failure;

Result<std::optional<HeldQueueFile>> HeldQueueFile::open(FileSystem& files,
                                                         const std::string& path) {
  FileDescriptor fd = files.open(path, O_RDONLY | O_CLOEXEC);
  if (!fd.valid()) {
    if (errno == ENOENT) return std::optional<HeldQueueFile>();
    return io_failure(errno, "cannot read " + path);
  }
  struct stat info {};
  if (files.fstat(fd.get(), &info) != 0) return io_failure(errno, "cannot read " + path);
  // What is appended after the look at its size is carried over as a late
  // append.
  Result<std::string> text =
      file_io::read_first(files, fd.get(), static_cast<std::size_t>(info.st_size), path);
  if (!text) return text.status();
  return std::optional<HeldQueueFile>(HeldQueueFile(files, std::move(fd), std::move(*text), info));
}

HeldQueueFile::HeldQueueFile(FileSystem& files, FileDescriptor fd, std::string text,
                             const struct stat& opened)
    : m_files(&files),
      m_fd(std::move(fd)),
      m_text(std::move(text)),
      m_opened(opened),
      m_carried(static_cast<off_t>(m_text.size())) {}

Result<bool> HeldQueueFile::only_appended_to(const std::string& path) const {
  struct stat named {};
  if (m_files->stat(path, &named) != 0) return false;
  if (named.st_dev != m_opened.st_dev || named.st_ino != m_opened.st_ino) return false;
  Result<std::string> start = file_io::read_first(*m_files, m_fd.get(), m_text.size(), path);
  if (!start) return start.status();
  return *start == m_text;
}

Result<std::size_t> HeldQueueFile::carry_late_appends(const std::string& path) {
  Result<std::string> late = file_io::read_from(*m_files, m_fd.get(), m_carried, path);
  if (!late) return late.status();
  if (late->empty()) return std::size_t{0};
  FileDescriptor fd = m_files->open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (!fd.valid()) return io_failure(errno, "cannot append to " + path);
  if (Status written = file_io::write_all(*m_files, fd.get(), *late, path); !written)
    return written;
  m_carried += static_cast<off_t>(late->size());
  return late->size();
}

Result<bool> replace_keeping_appends(HeldQueueFile& held, const std::string& path,
                                     const std::string& text, bool sync_directory) {
  FileSystem& files = held.files();
  Result<std::string> temporary = write_temporary(files, path, text, held.opened());
  if (!temporary) return temporary.status();
  Result<bool> unchanged = held.only_appended_to(path);
  if (!unchanged || !*unchanged) {
    static_cast<void>(files.unlink(*temporary));
    return unchanged;
  }
  if (Status committed = commit_temporary(files, *temporary, path, sync_directory); !committed)
    return committed;
  // From here on a write to the old file reaches no one but `held`.
  Result<std::size_t> carried = held.carry_late_appends(path);
  if (!carried) return carried.status();
  return true;
}

namespace {

// Gives the new file `fd` the old one's mode and owner (`replacing`), writes
// `text` to it and syncs it.
Status fill_temporary(FileSystem& files, FileDescriptor& fd, const std::string& temporary,
                      const std::optional<struct stat>& replacing, const std::string& text) {
  if (replacing) {
    if (files.fchmod(fd.get(), replacing->st_mode & 07777) != 0)
      return io_failure(errno, "cannot chmod " + temporary);
    // Only root may give the file back to another owner; others keep
    // theirs, so a failure here is no error.
    if (replacing->st_uid != ::geteuid() || replacing->st_gid != ::getegid())
      static_cast<void>(files.fchown(fd.get(), replacing->st_uid, replacing->st_gid));
  }
  if (Status written = file_io::write_all(files, fd.get(), text, temporary); !written)
    return written;
  if (files.fsync(fd.get()) != 0) return io_failure(errno, "cannot sync " + temporary);
  if (fd.close() != 0) return io_failure(errno, "cannot write " + temporary);
  return Status();
}

}  // namespace

Result<std::string> write_temporary(FileSystem& files, const std::string& path,
                                    const std::string& text) {
  struct stat old {};
  std::optional<struct stat> replacing;
  if (files.stat(path, &old) == 0) replacing = old;
  return write_temporary(files, path, text, replacing);
}

Result<std::string> write_temporary(FileSystem& files, const std::string& path,
                                    const std::string& text,
                                    const std::optional<struct stat>& replacing) {
  std::filesystem::path target(path);
  std::string directory = file_io::directory_of(path);
  static std::mt19937_64 random{std::random_device{}()};
  std::string temporary;
  FileDescriptor fd;
  for (int attempt = 0; !fd.valid(); ++attempt) {
    temporary = fmt::format("{}/.{}.{}.{:x}.tmp", directory, target.filename().string(), ::getpid(),
                            random());
    fd = files.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (!fd.valid() && (errno != EEXIST || attempt > 100))
      return io_failure(errno, "cannot create a file beside " + path);
  }
  if (Status filled = fill_temporary(files, fd, temporary, replacing, text); !filled) {
    static_cast<void>(fd.close());
    static_cast<void>(files.unlink(temporary));
    return filled;
  }
  return temporary;
}

Status commit_temporary(FileSystem& files, const std::string& temporary, const std::string& path,
                        bool sync) {
  if (files.rename(temporary, path) != 0) {
    int error = errno;
    static_cast<void>(files.unlink(temporary));
    return io_failure(error, "cannot replace " + path);
  }
  if (sync) file_io::sync_directory(files, file_io::directory_of(path));
  return Status();
}

}  // namespace runner
