// The queue lock file `<queue>.lock` (SPEC section 5). Created with
// O_CREAT|O_EXCL and our pid written into it, and kept open while held;
// removed on release only while it is still the file created here, which
// the open descriptor tells without reading the file back. A lock naming a
// process that does not exist is broken with a warning. An empty lock file
// is what Pegasus leaves (it writes no pid), or one being written right
// now: it counts as held.
#include "runner/queue/queue_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>

#include "file_io.h"

namespace runner {

namespace {

Status io_failure(const std::string& what) { return file_io::io_failure(errno, what); }

// The lock file's contents; nullopt when it does not exist (any more).
Result<std::optional<std::string>> read_lock(FileSystem& files, const std::string& path) {
  FileDescriptor fd = files.open(path, O_RDONLY | O_CLOEXEC);
  if (!fd.valid()) {
    if (errno == ENOENT) return std::optional<std::string>();
    return io_failure("cannot read the queue lock " + path);
  }
  std::string text;
  char buffer[256];
  while (text.size() < 4096) {
    ssize_t n = files.read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return std::optional<std::string>(std::move(text));
}

// The pid on the first line, or nullopt when there is none.
std::optional<pid_t> pid_in(const std::string& text) {
  std::size_t end = text.find_first_of("\r\n");
  std::string_view line = std::string_view(text).substr(0, end);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  pid_t pid = 0;
  auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), pid);
  if (line.empty() || ec != std::errc() || ptr != line.data() + line.size() || pid <= 0)
    return std::nullopt;
  return pid;
}

bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

std::string pid_line(pid_t pid) { return std::to_string(pid) + "\n"; }

// Creates the lock file holding our pid and returns it open; nullopt when
// it already exists.
Result<std::optional<FileDescriptor>> create_lock(FileSystem& files, const std::string& path) {
  FileDescriptor fd = files.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (!fd.valid()) {
    if (errno == EEXIST) return std::optional<FileDescriptor>();
    return io_failure("cannot create the queue lock " + path);
  }
  std::string text = pid_line(::getpid());
  // The pid is what a reader needs, and the write says whether it is there.
  ssize_t written = files.write(fd.get(), text.data(), text.size());
  if (written != static_cast<ssize_t>(text.size())) {
    int saved = errno;
    static_cast<void>(fd.close());
    static_cast<void>(files.unlink(path));
    errno = written < 0 ? saved : EIO;
    return io_failure("cannot write the queue lock " + path);
  }
  return std::optional<FileDescriptor>(std::move(fd));
}

}  // namespace

Result<std::optional<QueueLock>> QueueLock::try_acquire(const std::string& queue_path,
                                                        const Warn& warn, std::string* holder,
                                                        FileSystem& files) {
  std::string path = lock_path(queue_path);
  // Once more after breaking a stale lock or seeing one vanish.
  for (int attempt = 0; attempt < 2; ++attempt) {
    Result<std::optional<FileDescriptor>> created = create_lock(files, path);
    if (!created) return created.status();
    if (*created) return std::optional<QueueLock>(QueueLock(files, path, std::move(**created)));
    Result<std::optional<std::string>> read = read_lock(files, path);
    if (!read) return read.status();
    const std::optional<std::string>& text = *read;
    if (!text) continue;
    std::optional<pid_t> pid = pid_in(*text);
    if (!pid) {
      if (holder)
        *holder = "another process (its lock file " + path +
                  " names no pid, as Pegasus leaves it; if no Pegasus runs on this queue, "
                  "remove that file)";
      return std::optional<QueueLock>();
    }
    if (*pid == ::getpid() || process_exists(*pid)) {
      if (holder) *holder = fmt::format("pid {}", *pid);
      return std::optional<QueueLock>();
    }
    // Only remove the file if it is still the stale one we looked at.
    Result<std::optional<std::string>> again = read_lock(files, path);
    if (!again) return again.status();
    if (!*again) continue;
    if (**again != *text) {
      if (holder) *holder = "another process";
      return std::optional<QueueLock>();
    }
    if (warn)
      warn(fmt::format("breaking stale lock {} left by pid {}, which is not running", path, *pid));
    if (files.unlink(path) != 0 && errno != ENOENT)
      return io_failure("cannot remove the stale queue lock " + path);
  }
  if (holder) *holder = "another process";
  return std::optional<QueueLock>();
}

QueueLock::QueueLock(QueueLock&& other) noexcept
    : m_files(other.m_files),
      m_lock_path(std::move(other.m_lock_path)),
      m_lock_file(std::move(other.m_lock_file)) {
  other.m_lock_path.clear();
}

QueueLock& QueueLock::operator=(QueueLock&& other) noexcept {
  if (this != &other) {
    QueueLock released(std::move(*this));
    m_files = other.m_files;
    m_lock_path = std::move(other.m_lock_path);
    m_lock_file = std::move(other.m_lock_file);
    other.m_lock_path.clear();
  }
  return *this;
}

QueueLock::~QueueLock() {
  if (m_lock_path.empty()) return;
  // The file created here has no name any more once someone removed it, or
  // broke it as stale, or moved another over it: the lock then at the path
  // is not ours to remove. One that cannot be looked at or removed is broken
  // by the next taker, once this process is gone. It is closed before it is
  // removed: NFS would keep a file removed while open under another name.
  struct stat info {};
  bool ours = m_files->fstat(m_lock_file.get(), &info) == 0 && info.st_nlink > 0;
  static_cast<void>(m_lock_file.close());
  if (ours) static_cast<void>(m_files->unlink(m_lock_path));
}

std::string QueueLock::lock_path(const std::string& queue_path) { return queue_path + ".lock"; }

}  // namespace runner
