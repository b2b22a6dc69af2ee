// One log file per job, state_dir/logs/<id>.log, holding the raw bytes of
// its stdout and stderr in the order they arrived; a job that spans hosts
// has one per rank, state_dir/logs/<id>.<rank>.log. Output is buffered per
// job (a few KiB) and written when the buffer fills, on flush() (a run
// calls it before each wait of its event loop, so `tail -f` keeps up) and
// on close().
// At most `max_open_files` descriptors are held at once; the least recently
// written log is closed and reopened in append mode when needed again, so
// hundreds of concurrent jobs do not exhaust the descriptor limit.
// Output that cannot be written (a full disk) is dropped, never retried
// forever: the failure is returned at once, the next write that succeeds
// first puts a line saying how many bytes are missing there, and close()
// says the log is incomplete.
// A long log is written behind: every few MiB its writeback is started and
// the part written before is dropped from the page cache, so a job that
// prints gigabytes neither fills memory with them nor slows on fresh pages.
// It also has disk space reserved a few MiB past its end, so that writing
// it does not allocate blocks as it goes; what is left is released when its
// descriptor closes (a runner killed meanwhile leaves that much reserved
// past the end of each long log it was writing).
//
// Threading: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "runner/core/file_system.h"
#include "runner/core/status.h"
#include "runner/core/job_exit.h"

namespace runner {

// Which log: a job's own, or one rank's of a job that spans hosts.
struct LogId {
  LogId(JobId job) : job(job) {}  // a job's own log
  LogId(JobId job, std::optional<int> rank) : job(job), rank(rank) {}
  JobId job = 0;
  std::optional<int> rank;
  bool operator==(const LogId&) const = default;
};

struct LogIdHash {
  std::size_t operator()(const LogId& id) const {
    return std::hash<JobId>()(id.job) * 31 + static_cast<std::size_t>(id.rank.value_or(-1) + 1);
  }
};

// The log files of the jobs of one state directory.
class JobLogs {
 public:
  // `state_dir` must exist with its logs/ folder (ensure_state_dir).
  // `files` does the file operations (a test's may fail them).
  explicit JobLogs(std::string state_dir, std::size_t max_open_files = 64,
                   std::size_t buffer_size = 8 * 1024, FileSystem& files = real_file_system());
  // Flushes and closes every log.
  ~JobLogs();
  JobLogs(const JobLogs&) = delete;
  JobLogs& operator=(const JobLogs&) = delete;

  // state_dir/logs/<job>.log, or <job>.<rank>.log
  std::string path(LogId job) const;

  // Creates (or empties) the job's log; with `keep_earlier_output` (a rerun
  // of the same job) appends to what is there. Every call below returns an
  // error naming the file and the reason when a file operation failed; the
  // job stays open and later writes try again.
  Status open(LogId job, bool keep_earlier_output = false);
  // Appends output of a job that is open; an error for one that is not.
  Status append(LogId job, std::string_view bytes);
  // Writes what is buffered and forgets the job. An error when the log is
  // not whole: how many bytes of this opening's output were lost, and why.
  Status close(LogId job);
  // Writes every job's buffered bytes.
  Status flush();

  // Jobs open / descriptors held right now.
  std::size_t open_jobs() const { return m_logs.size(); }
  std::size_t open_files() const { return m_open_files; }

 private:
  struct Log {
    FileDescriptor fd;
    std::string buffer;
    std::uint64_t last_use = 0;
    std::uint64_t end = 0;  // the file's size while open: where the next write lands
    // Write-behind: where writeback was last started, and up to where the
    // page cache was released (file offsets).
    std::uint64_t written_back = 0;
    std::uint64_t released = 0;
    std::uint64_t reserved = 0;   // disk space reserved up to here (file offset)
    bool created = false;         // opened (and emptied, unless kept) once
    bool keep_earlier = false;    // the first opening appends
    std::uint64_t lost = 0;       // bytes dropped since open()
    std::uint64_t unmarked = 0;   // of those, not yet said in the log
    std::string lost_reason;      // the first failure
  };

  Status ensure_fd(LogId job, Log& log);
  Status write_out(LogId job, Log& log, std::string_view bytes);
  // Writes `bytes`; `written` says how many reached the file.
  Status write_fully(LogId job, Log& log, std::string_view bytes, std::size_t& written);
  // Counts `bytes` as lost for `reason`; returns the failure.
  Status lose(Log& log, std::size_t bytes, Status reason);
  void write_behind(Log& log);
  Status drain(LogId job, Log& log);
  void close_fd(Log& log);
  void evict_one(LogId keep);

  FileSystem& m_files;
  std::string m_state_dir;
  std::size_t m_max_open;
  std::size_t m_buffer_size;
  std::size_t m_open_files = 0;
  std::uint64_t m_tick = 0;
  std::unordered_map<LogId, Log, LogIdHash> m_logs;
};

}  // namespace runner
