// The queue file on disk: take the first job, append jobs, each under the
// queue lock, each by writing a new file beside the old one and renaming it
// over. Editors do not take the lock, so before the rename the file is read
// again and the take starts over if someone changed it meanwhile; what was
// only appended to it (`>>` takes no lock either) is carried into the new
// file (queue_replacement.h).
#include "runner/queue/queue_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <system_error>
#include <thread>

#include "empty_list.h"
#include "file_io.h"
#include "queue_replacement.h"
#include "runner/config/config_error.h"
#include "runner/queue/front_taker.h"
#include "runner/queue/queue_document.h"
#include "runner/queue/queue_edit.h"
#include "runner/queue/real_queue_path.h"

namespace runner {

namespace {

using file_io::io_error;

constexpr auto k_lock_poll = std::chrono::milliseconds(10);

// The file's text, or nullopt when it does not exist.
std::optional<std::string> read_if_exists(FileSystem& files, const std::string& path) {
  std::optional<HeldQueueFile> held = HeldQueueFile::open(files, path);
  if (!held) return std::nullopt;
  return held->text();
}

// Appends `text` to consumed.yaml (created if missing), starting on a new
// line even if someone left the file without a final newline. Not synced:
// the record follows the queue, which is not synced either.
void append_consumed(FileSystem& files, const std::string& path, const std::string& text) {
  FileDescriptor fd = files.open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (!fd.valid()) throw io_error(errno, "cannot open " + path);
  std::string out = text;
  struct stat info {};
  char last = '\n';
  if (files.fstat(fd.get(), &info) == 0 && info.st_size > 0 &&
      files.pread(fd.get(), &last, 1, info.st_size - 1) == 1 && last != '\n')
    out.insert(out.begin(), '\n');
  file_io::write_all(files, fd.get(), out, path);
}

}  // namespace

QueueFile::QueueFile(std::string path, QueueLock::Warn warn, FileSystem& files)
    : m_files(files),
      m_path(std::move(path)),
      m_real_path(real_queue_path(m_path)),
      m_warn(std::move(warn)) {}

QueueFile::~QueueFile() {
  if (!m_replaced) return;
  try {
    if (std::optional<QueueLock> lock =
            QueueLock::try_acquire(m_real_path, m_warn, nullptr, m_files))
      carry_late_appends();
  } catch (const std::exception& error) {
    if (m_warn) m_warn(error.what());
  }
}

void QueueFile::carry_late_appends() {
  if (!m_replaced) return;
  try {
    m_replaced->carry_late_appends(m_real_path);
  } catch (const std::system_error& error) {
    if (m_warn)
      m_warn(fmt::format("jobs appended to {} as it was replaced may be lost: {}", m_path,
                         error.what()));
  }
  m_replaced.reset();
}

TakeBatch QueueFile::take_while(const std::function<bool(const JobSpec&)>& can_place) {
  TakeBatch batch;
  std::string holder;
  std::optional<QueueLock> lock;
  try {
    lock = QueueLock::try_acquire(m_real_path, m_warn, &holder, m_files);
  } catch (const std::system_error& error) {
    batch.stopped = QueueUnavailable{error.what()};
    return batch;
  }
  if (!lock) {
    m_own_changes.note_blocked();
    batch.stopped = QueueUnavailable{fmt::format("locked by {}", holder)};
    return batch;
  }
  // What was appended to the file this object last replaced, after it was
  // replaced, joins the queue before it is read.
  carry_late_appends();
  std::optional<HeldQueueFile> original;
  try {
    original = HeldQueueFile::open(m_files, m_real_path);
  } catch (const std::system_error& error) {
    batch.stopped = QueueUnavailable{error.what()};
    return batch;
  }
  if (!original) {  // no file: an empty queue
    m_cache.reset();
    return batch;
  }
  QueueDocument doc;
  if (m_cache && m_cache->text == original->text()) {
    doc = std::move(*m_cache);
  } else {
    try {
      doc = parse_queue_document(original->text(), m_path);
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
  if (doc.entries.empty()) doc.text = empty_list::marked(doc.text);

  try {
    // The new text is on disk before it replaces the old: a machine crash
    // can bring back the old queue, never an empty or torn one.
    if (!replace_keeping_appends(*original, m_real_path, doc.text, false)) {
      // Someone edited the file without the lock: take nothing, look again.
      batch.taken.clear();
      batch.stopped = QueueUnavailable{fmt::format("{} changed while jobs were taken", m_path)};
      return batch;
    }
    m_own_changes.note_replaced();
  } catch (const std::system_error& error) {
    batch.taken.clear();
    batch.stopped = QueueUnavailable{error.what()};
    return batch;
  }
  // An appender that opened the old file just before the rename may still
  // write to it: it is looked at again on the next take.
  m_replaced = std::make_unique<HeldQueueFile>(std::move(*original));
  m_cache = std::move(doc);
  std::string consumed;
  for (const JobSpec& job : batch.taken) consumed += entry_to_yaml(canonical_entry(job));
  try {
    append_consumed(m_files, consumed_path(), consumed);
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
    text = read_if_exists(m_files, m_real_path);
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

Status QueueFile::append(const std::string& items, int timeout_ms) {
  QueueDocument added = parse_queue_document(items, "jobs to add");
  if (added.entries.empty()) return Status();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string holder;
  std::optional<QueueLock> lock;
  try {
    while (!(lock = QueueLock::try_acquire(m_real_path, m_warn, &holder, m_files))) {
      if (std::chrono::steady_clock::now() >= deadline)
        return Status::error(fmt::format("{}: still locked by {} after {} ms; try again later",
                                         m_path, holder, timeout_ms));
      std::this_thread::sleep_for(k_lock_poll);
    }
    // An editor that saves without the lock makes the edit start over.
    while (true) {
      QueueEdit edit(m_real_path, m_files);
      QueueDocument doc = parse_queue_document(edit.original(), m_path);
      if (edit.save(text_with_appended(doc, items))) return Status();
      if (std::chrono::steady_clock::now() >= deadline)
        return Status::error(fmt::format(
            "{} kept changing while jobs were added (an editor saving without `runner lock`?); "
            "nothing was added, try again",
            m_path));
      std::this_thread::sleep_for(k_lock_poll);
    }
  } catch (const std::system_error& error) {
    return Status::error(error.what());
  }
}

std::string QueueFile::consumed_path() const {
  return std::filesystem::path(m_path).replace_filename("consumed.yaml").string();
}

void write_file_atomically(const std::string& path, const std::string& text) {
  std::string target = real_queue_path(path);
  FileSystem& files = real_file_system();
  commit_temporary(files, write_temporary(files, target, text), target, true);
}

std::string read_file(const std::string& path) {
  std::optional<std::string> text = read_if_exists(real_file_system(), path);
  if (!text) throw io_error(ENOENT, "cannot read " + path);
  return *text;
}

}  // namespace runner
