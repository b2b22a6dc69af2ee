// The queue file on disk: taking the first job and appending jobs, each
// under the queue lock, each writing a new file beside the old one and
// renaming it over, so a crash never leaves a half-written queue. A file
// that does not parse is never written.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runner/config/queue_entry.h"
#include "runner/core/file_system.h"
#include "runner/core/result.h"
#include "runner/queue/own_changes.h"
#include "runner/queue/queue_document.h"
#include "runner/queue/queue_lock.h"

namespace runner {

class ConsumedLog;
class HeldQueueFile;

// Outcomes of QueueFile::take_first.
struct Taken {
  JobSpec job;
};
struct QueueEmpty {};
struct HeadNotPlaceable {  // the first job exists but `can_place` said no
  JobSpec job;
};
struct QueueUnavailable {  // locked by someone else, or does not parse
  std::string reason;      // "locked by pid 12", or "queue.yaml:3:1: ..."
  bool parse_error = false;
};
using TakeResult = std::variant<Taken, QueueEmpty, HeadNotPlaceable, QueueUnavailable>;

// Outcome of QueueFile::take_while: the jobs taken, in queue order, and why
// it stopped taking.
struct TakeBatch {
  std::vector<JobSpec> taken;
  // Out of a long queue, after `taken`: the jobs that follow them, removed
  // to pay for the rewrite, which run before anything left in the file.
  std::vector<JobSpec> taken_ahead;
  std::variant<QueueEmpty, HeadNotPlaceable, QueueUnavailable> stopped;
};

class QueueFile {
 public:
  // `path` may be a symbolic link: the file it leads to is what is locked
  // (`<real path>.lock`), read and replaced, and the link stays a link.
  // `files` does the file operations (a test's may fail them).
  explicit QueueFile(std::string path, QueueLock::Warn warn = {},
                     FileSystem& files = real_file_system());
  // Carries over what was appended to the last file replaced here, if the
  // lock can be had at once.
  ~QueueFile();
  QueueFile(const QueueFile&) = delete;
  QueueFile& operator=(const QueueFile&) = delete;

  const std::string& path() const { return m_path; }

  // Under the lock, in one read and one write: while the first job of the
  // queue satisfies `can_place(job)` (which may reserve room for it), take
  // it. The taken jobs leave the file and are appended to consumed.yaml. If
  // the file changed meanwhile (an editor does not take the lock), nothing
  // is taken and the result says so. A missing queue file counts as empty.
  // Taking k jobs costs O(file + k): the file is parsed only when it is not
  // the text this object last read or wrote, and each job costs about the
  // size of its entry. Jobs appended to the file with `>>` meanwhile are
  // never lost: the file is kept open after it is replaced, and what it
  // received beyond the text that was read goes to the end of the new one
  // (at once, and again on the next take). The new queue is fsync'd before
  // it is renamed into place, but the rename is not waited for (no
  // directory fsync): a crash of the machine (not of runner) may bring back
  // the old queue, and with it jobs that had started (the journal says
  // which), never a torn file.
  // append() syncs both.
  // A queue of k_take_ahead_threshold bytes or more (take_ahead.h): when
  // jobs were taken, the jobs after them are removed too, while
  // `can_take_ahead(job)` says yes, up to jobs_per_take(size) jobs in all,
  // and returned as taken_ahead (consumed.yaml holds them too). Only plain
  // jobs are: the first service, `every: host` job, job with `push:` or
  // entry that cannot be rewritten stops it. No `can_take_ahead`: none is.
  TakeBatch take_while(const std::function<bool(const JobSpec&)>& can_place,
                       const std::function<bool(const JobSpec&)>& can_take_ahead = {});

  // take_while for at most one job.
  TakeResult take_first(const std::function<bool(const JobSpec&)>& can_place);

  // Parses the file without the lock (for validation and dry runs). A
  // failure naming the file, line and column (Status::at) when it does not
  // parse; a missing file is a failure too.
  Result<std::vector<QueueEntry>> read_entries() const;

  // Under the lock (waiting up to `timeout_ms` for it): appends the items
  // (YAML sequence-item text) to the queue. A failure, and the queue as it
  // was, when the queue does not parse, or the items do not (naming the
  // file, line and column), when the lock cannot be had in time, the file
  // keeps changing, or it cannot be written (a full disk).
  Status append(const std::string& items, int timeout_ms = 10000);

  // consumed.yaml beside the queue file.
  const std::string& consumed_path() const;

  // What this object did to the file, for a QueueWatcher of it.
  OwnChanges& own_changes() { return m_own_changes; }

 private:
  // Under the lock: appends to the queue what the file replaced last
  // received after it was replaced, and lets it go.
  void carry_late_appends();

  FileSystem& m_files;
  std::string m_path;       // as given
  std::string m_real_path;  // links resolved: what is locked, read and replaced
  QueueLock::Warn m_warn;
  // The file the last take replaced, still open (see carry_late_appends).
  std::unique_ptr<HeldQueueFile> m_replaced;
  // The file as last read or written here, parsed.
  std::optional<QueueDocument> m_cache;
  OwnChanges m_own_changes;
  std::unique_ptr<ConsumedLog> m_consumed;  // consumed.yaml, open from the first take on
};

// Writes `text` to `path` atomically: a temporary file in the same
// directory, fsync, rename, keeping the old file's permissions.
Status write_file_atomically(const std::string& path, const std::string& text);

// Reads a whole file; a failure when it cannot ("cannot read PATH: ...").
Result<std::string> read_file(const std::string& path);

}  // namespace runner
