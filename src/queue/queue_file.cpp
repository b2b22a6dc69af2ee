// The queue file on disk: take the first job, append jobs, each under the
// queue lock, each by writing a new file beside the old one and renaming it
// over. Editors do not take the lock, so before the rename the file is read
// again and the take starts over if someone changed it meanwhile.
#include "runner/queue/queue_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <random>
#include <system_error>
#include <thread>

#include "own_changes.h"
#include "runner/config/config_error.h"
#include "runner/queue/queue_document.h"

namespace runner {

namespace {

constexpr auto k_lock_poll = std::chrono::milliseconds(10);

std::system_error io_error(int error, const std::string& what) {
  return std::system_error(error, std::generic_category(), what);
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error(errno, "cannot write " + path);
    done += static_cast<std::size_t>(n);
  }
}

std::string directory_of(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// The file a write to `path` must replace: the target when `path` is a
// symbolic link, so the link stays a link.
std::string write_target(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_symlink(path, error)) return path;
  std::filesystem::path target = std::filesystem::weakly_canonical(path, error);
  return error ? path : target.string();
}

void sync_directory(const std::string& directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A new file beside `path` holding `text` (fsync'd when `sync`), with the
// permissions of the file it will replace.
std::string write_temporary(const std::string& path, const std::string& text, bool sync = true) {
  std::filesystem::path target(path);
  std::string directory = directory_of(path);
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
    write_all(fd, text, temporary);
    if (sync && ::fsync(fd) != 0) throw io_error(errno, "cannot sync " + temporary);
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

void commit(const std::string& temporary, const std::string& path, bool sync = true) {
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    int error = errno;
    ::unlink(temporary.c_str());
    throw io_error(error, "cannot replace " + path);
  }
  own_changes::note_queue_replaced(path);
  if (sync) sync_directory(directory_of(path));
}

// The file's text, or nullopt when it does not exist.
std::optional<std::string> read_if_exists(const std::string& path) {
  try {
    return read_file(path);
  } catch (const std::system_error& error) {
    if (error.code() == std::errc::no_such_file_or_directory) return std::nullopt;
    throw;
  }
}

// Appends `text` to consumed.yaml (created if missing), starting on a new
// line even if someone left the file without a final newline. Not synced:
// the record follows the queue, which is not synced either.
void append_consumed(const std::string& path, const std::string& text) {
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw io_error(errno, "cannot open " + path);
  try {
    std::string out = text;
    struct stat info {};
    char last = '\n';
    if (::fstat(fd, &info) == 0 && info.st_size > 0 &&
        ::pread(fd, &last, 1, info.st_size - 1) == 1 && last != '\n')
      out.insert(out.begin(), '\n');
    write_all(fd, out, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace

QueueFile::QueueFile(std::string path, QueueLock::Warn warn)
    : m_path(std::move(path)), m_warn(std::move(warn)) {}

TakeBatch QueueFile::take_while(const std::function<bool(const JobSpec&)>& can_place) {
  TakeBatch batch;
  std::string holder;
  std::optional<QueueLock> lock;
  try {
    lock = QueueLock::try_acquire(m_path, m_warn, &holder);
  } catch (const std::system_error& error) {
    batch.stopped = QueueUnavailable{error.what()};
    return batch;
  }
  if (!lock) {
    own_changes::note_blocked(QueueLock::lock_path(m_path));
    batch.stopped = QueueUnavailable{fmt::format("locked by {}", holder)};
    return batch;
  }
  std::string target = write_target(m_path);
  std::optional<std::string> original;
  try {
    original = read_if_exists(target);
  } catch (const std::system_error& error) {
    batch.stopped = QueueUnavailable{error.what()};
    return batch;
  }
  if (!original) {  // no file: an empty queue
    m_cache.reset();
    return batch;
  }
  QueueDocument doc;
  if (m_cache && m_cache->text == *original) {
    doc = std::move(*m_cache);
  } else {
    try {
      doc = parse_queue_document(*original, m_path);
    } catch (const ConfigError& error) {
      m_cache.reset();
      batch.stopped = QueueUnavailable{error.what(), true};
      return batch;
    }
  }
  m_cache.reset();
  FrontTaker taker(std::move(doc));
  while (true) {
    std::optional<JobSpec> job = taker.peek();
    if (!job) break;
    if (!can_place(*job)) {
      batch.stopped = HeadNotPlaceable{std::move(*job)};
      break;
    }
    batch.taken.push_back(std::move(*job));
    taker.take();
  }
  doc = std::move(taker).finish();
  if (batch.taken.empty()) {
    m_cache = std::move(doc);
    return batch;
  }

  try {
    // The new text is on disk before it replaces the old: a machine crash
    // can bring back the old queue, never an empty or torn one.
    std::string temporary = write_temporary(target, doc.text);
    std::optional<std::string> now;
    try {
      now = read_if_exists(target);
    } catch (...) {
      ::unlink(temporary.c_str());
      throw;
    }
    if (now != original) {
      // Someone edited the file without the lock: take nothing, look again.
      ::unlink(temporary.c_str());
      batch.taken.clear();
      batch.stopped = QueueUnavailable{fmt::format("{} changed while jobs were taken", m_path)};
      return batch;
    }
    commit(temporary, target, false);
  } catch (const std::system_error& error) {
    batch.taken.clear();
    batch.stopped = QueueUnavailable{error.what()};
    return batch;
  }
  m_cache = std::move(doc);
  std::string consumed;
  for (const JobSpec& job : batch.taken) consumed += entry_to_yaml(canonical_entry(job));
  try {
    append_consumed(consumed_path(), consumed);
  } catch (const std::system_error& error) {
    // The jobs are out of the queue already; running them beats losing them.
    if (m_warn)
      m_warn(fmt::format("{} jobs left the queue but are missing from consumed.yaml: {}",
                         batch.taken.size(), error.what()));
  }
  return batch;
}

TakeResult QueueFile::take_first(const std::function<bool(const JobSpec&)>& can_place) {
  bool placed_one = false;
  TakeBatch batch = take_while([&](const JobSpec& job) {
    if (placed_one) return false;
    return placed_one = can_place(job);
  });
  if (!batch.taken.empty()) return Taken{std::move(batch.taken.front())};
  return std::visit([](auto&& stop) -> TakeResult { return stop; }, batch.stopped);
}

std::vector<QueueEntry> QueueFile::read_entries() const {
  std::optional<std::string> text;
  try {
    text = read_if_exists(m_path);
  } catch (const std::system_error& error) {
    throw ConfigError(m_path, 0, 0,
                      fmt::format("cannot read the queue: {}", error.code().message()));
  }
  if (!text) throw ConfigError(m_path, 0, 0, "no such queue file; create it or pass --queue-file");
  QueueDocument doc = parse_queue_document(std::move(*text), m_path);
  std::vector<QueueEntry> entries;
  entries.reserve(doc.entries.size());
  for (auto& span : doc.entries) entries.push_back(std::move(span.entry));
  return entries;
}

void QueueFile::append(const std::string& items, int timeout_ms) {
  QueueDocument added = parse_queue_document(items, "jobs to add");
  if (added.entries.empty()) return;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string holder;
  std::optional<QueueLock> lock;
  while (!(lock = QueueLock::try_acquire(m_path, m_warn, &holder))) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error(fmt::format("{}: still locked by {} after {} ms; try again later",
                                           m_path, holder, timeout_ms));
    std::this_thread::sleep_for(k_lock_poll);
  }
  std::string target = write_target(m_path);
  std::string text = read_if_exists(target).value_or("");
  QueueDocument doc = parse_queue_document(std::move(text), m_path);
  write_file_atomically(target, text_with_appended(doc, items));
}

std::string QueueFile::consumed_path() const {
  return std::filesystem::path(m_path).replace_filename("consumed.yaml").string();
}

void write_file_atomically(const std::string& path, const std::string& text) {
  std::string target = write_target(path);
  commit(write_temporary(target, text), target);
}

std::string read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw io_error(errno, "cannot read " + path);
  std::string text;
  char buffer[65536];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      throw io_error(error, "cannot read " + path);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace runner
