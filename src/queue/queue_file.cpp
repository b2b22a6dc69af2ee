// The queue file on disk: take the first job, append jobs, each under the
// queue lock, each by writing a new file beside the old one and renaming it
// over. Editors do not take the lock, so before the rename the file is read
// again and the take starts over if someone changed it meanwhile; what was
// only appended to it (`>>` takes no lock either) is carried into the new
// file (queue_replacement.h).
#include "runner/queue/queue_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "consumed_log.h"
#include "empty_list.h"
#include "file_io.h"
#include "queue_replacement.h"
#include "runner/queue/front_taker.h"
#include "runner/queue/queue_document.h"
#include "runner/queue/queue_edit.h"
#include "runner/queue/real_queue_path.h"
#include "runner/queue/take_ahead.h"

namespace runner {

namespace {

using file_io::io_failure;

constexpr auto k_lock_poll = std::chrono::milliseconds(10);

// The file's text, or nullopt when it does not exist.
Result<std::optional<std::string>> read_if_exists(FileSystem& files, const std::string& path) {
  Result<std::optional<HeldQueueFile>> held = HeldQueueFile::open(files, path);
  if (!held) return held.status();
  if (!*held) return std::optional<std::string>();
  return std::optional<std::string>((*held)->text());
}

// A job that may be taken ahead: one that starts like any other, on the
// slots of one placement.
bool plain(const JobSpec& job) { return !job.service && !job.every_host && job.push.empty(); }

}  // namespace

QueueFile::QueueFile(std::string path, QueueLock::Warn warn, FileSystem& files)
    : m_files(files),
      m_path(std::move(path)),
      m_real_path(real_queue_path(m_path)),
      m_warn(std::move(warn)),
      m_consumed(std::make_unique<ConsumedLog>(
          files, std::filesystem::path(m_path).replace_filename("consumed.yaml").string())) {}

QueueFile::~QueueFile() {
  if (!m_replaced) return;
  Result<std::optional<QueueLock>> lock =
      QueueLock::try_acquire(m_real_path, m_warn, nullptr, m_files);
  if (!lock) {
    if (m_warn) m_warn(lock.status().message());
  } else if (*lock) {
    carry_late_appends();
  }
}

void QueueFile::carry_late_appends() {
  if (!m_replaced) return;
  Result<std::size_t> carried = m_replaced->carry_late_appends(m_real_path);
  if (!carried && m_warn)
    m_warn(fmt::format("jobs appended to {} as it was replaced may be lost: {}", m_path,
                       carried.status().message()));
  m_replaced.reset();
}

TakeBatch QueueFile::take_while(const std::function<bool(const JobSpec&)>& can_place,
                                const std::function<bool(const JobSpec&)>& can_take_ahead) {
  TakeBatch batch;
  std::string holder;
  Result<std::optional<QueueLock>> lock =
      QueueLock::try_acquire(m_real_path, m_warn, &holder, m_files);
  if (!lock) {
    batch.stopped = QueueUnavailable{lock.status().message()};
    return batch;
  }
  if (!*lock) {
    m_own_changes.note_blocked();
    batch.stopped = QueueUnavailable{fmt::format("locked by {}", holder)};
    return batch;
  }
  // What was appended to the file this object last replaced, after it was
  // replaced, joins the queue before it is read.
  carry_late_appends();
  Result<std::optional<HeldQueueFile>> opened = HeldQueueFile::open(m_files, m_real_path);
  if (!opened) {
    batch.stopped = QueueUnavailable{opened.status().message()};
    return batch;
  }
  std::optional<HeldQueueFile>& original = *opened;
  if (!original) {  // no file: an empty queue
    m_cache.reset();
    return batch;
  }
  QueueDocument doc;
  if (m_cache && m_cache->text == original->text()) {
    doc = std::move(*m_cache);
  } else {
    Result<QueueDocument> parsed = parse_queue_document(original->text(), m_path);
    if (!parsed) {
      m_cache.reset();
      batch.stopped = QueueUnavailable{parsed.status().located_message(), true};
      return batch;
    }
    doc = std::move(*parsed);
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
    if (Status taken = taker.take(); !taken) {
      batch.stopped = QueueUnavailable{taken.located_message(), true};
      break;
    }
    batch.taken.push_back(std::move(*job));
  }
  if (!batch.taken.empty() && can_take_ahead &&
      std::holds_alternative<HeadNotPlaceable>(batch.stopped)) {
    std::size_t wanted = jobs_per_take(original->text().size());
    while (batch.taken.size() + batch.taken_ahead.size() < wanted) {
      std::optional<JobSpec> job = taker.peek();
      if (!job || !plain(*job) || !can_take_ahead(*job) || !taker.take().ok()) break;
      batch.taken_ahead.push_back(std::move(*job));
    }
  }
  doc = std::move(taker).finish();
  if (batch.taken.empty()) {
    m_cache = std::move(doc);
    return batch;
  }
  if (doc.entries.empty()) doc.text = empty_list::marked(doc.text);

  // The new text is on disk before it replaces the old: a machine crash
  // can bring back the old queue, never an empty or torn one.
  Result<bool> replaced = replace_keeping_appends(*original, m_real_path, doc.text, false);
  if (!replaced) {
    batch.taken.clear();
    batch.taken_ahead.clear();
    batch.stopped = QueueUnavailable{replaced.status().message()};
    return batch;
  }
  if (!*replaced) {
    // Someone edited the file without the lock: take nothing, look again.
    batch.taken.clear();
    batch.taken_ahead.clear();
    batch.stopped = QueueUnavailable{fmt::format("{} changed while jobs were taken", m_path)};
    return batch;
  }
  m_own_changes.note_replaced();
  // An appender that opened the old file just before the rename may still
  // write to it: it is looked at again on the next take.
  m_replaced = std::make_unique<HeldQueueFile>(std::move(*original));
  m_cache = std::move(doc);
  std::string consumed;
  for (const JobSpec& job : batch.taken) consumed += entry_to_yaml(canonical_entry(job));
  for (const JobSpec& job : batch.taken_ahead) consumed += entry_to_yaml(canonical_entry(job));
  // The jobs are out of the queue already; running them beats losing them.
  if (Status appended = m_consumed->append(consumed); !appended && m_warn)
    m_warn(fmt::format("{} jobs left the queue but are missing from consumed.yaml: {}",
                       batch.taken.size() + batch.taken_ahead.size(), appended.message()));
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

Result<std::vector<QueueEntry>> QueueFile::read_entries() const {
  Result<std::optional<std::string>> text = read_if_exists(m_files, m_real_path);
  if (!text) {
    // The system's reason alone: the message names the path the user gave.
    std::string_view reason = text.status().message();
    std::string said = "cannot read " + m_real_path + ": ";
    if (reason.starts_with(said)) reason.remove_prefix(said.size());
    return Status::at(m_path, 0, "cannot read the queue: " + std::string(reason));
  }
  if (!*text) return Status::at(m_path, 0, "no such queue file; create it or pass --queue-file");
  Result<QueueDocument> doc = parse_queue_document(std::move(**text), m_path);
  if (!doc) return doc.status();
  std::vector<QueueEntry> entries;
  entries.reserve(doc->entries.size());
  for (auto& span : doc->entries) entries.push_back(std::move(span.entry));
  return entries;
}

Status QueueFile::append(const std::string& items, int timeout_ms) {
  Result<QueueDocument> added = parse_queue_document(items, "jobs to add");
  if (!added) return added.status();
  if (added->entries.empty()) return Status();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string holder;
  Result<std::optional<QueueLock>> lock = std::optional<QueueLock>();
  while (!(lock = QueueLock::try_acquire(m_real_path, m_warn, &holder, m_files)) || !*lock) {
    if (!lock) return lock.status();
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::error(fmt::format("{}: still locked by {} after {} ms; try again later",
                                       m_path, holder, timeout_ms));
    std::this_thread::sleep_for(k_lock_poll);
  }
  // An editor that saves without the lock makes the edit start over.
  while (true) {
    Result<QueueEdit> edit = QueueEdit::begin(m_real_path, m_files);
    if (!edit) return edit.status();
    Result<QueueDocument> doc = parse_queue_document(edit->original(), m_path);
    if (!doc) return doc.status();
    Result<bool> saved = edit->save(text_with_appended(*doc, *added));
    if (!saved) return saved.status();
    if (*saved) return Status();
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::error(fmt::format(
          "{} kept changing while jobs were added (an editor saving without `runner lock`?); "
          "nothing was added, try again",
          m_path));
    std::this_thread::sleep_for(k_lock_poll);
  }
}

const std::string& QueueFile::consumed_path() const { return m_consumed->path(); }

Status write_file_atomically(const std::string& path, const std::string& text) {
  std::string target = real_queue_path(path);
  FileSystem& files = real_file_system();
  Result<std::string> temporary = write_temporary(files, target, text);
  if (!temporary) return temporary.status();
  return commit_temporary(files, *temporary, target, true);
}

Result<std::string> read_file(const std::string& path) {
  Result<std::optional<std::string>> text = read_if_exists(real_file_system(), path);
  if (!text) return text.status();
  if (!*text) return io_failure(ENOENT, "cannot read " + path);
  return std::move(**text);
}

}  // namespace runner
