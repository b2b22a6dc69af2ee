// One log file per job, state_dir/logs/<id>.log, holding the raw bytes of
// its stdout and stderr in the order they arrived. Output is buffered per
// job (a few KiB) and written when the buffer fills, on flush() (call it
// when the event loop goes idle, so `tail -f` keeps up) and on close().
// At most `max_open_files` descriptors are held at once; the least recently
// written log is closed and reopened in append mode when needed again, so
// hundreds of concurrent jobs do not exhaust the descriptor limit.
// A long log is written behind: every few MiB its writeback is started and
// the part written before is dropped from the page cache, so a job that
// prints gigabytes neither fills memory with them nor slows on fresh pages.
//
// Threading: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "runner/exec/transport.h"

namespace runner {

// The log files of the jobs of one state directory.
class JobLogs {
 public:
  // `state_dir` must exist with its logs/ folder (ensure_state_dir).
  explicit JobLogs(std::string state_dir, std::size_t max_open_files = 64,
                   std::size_t buffer_size = 8 * 1024);
  // Flushes and closes every log.
  ~JobLogs();
  JobLogs(const JobLogs&) = delete;
  JobLogs& operator=(const JobLogs&) = delete;

  // state_dir/logs/<job>.log
  std::string path(JobId job) const;

  // Creates (or empties) the job's log; with `keep_earlier_output` (a rerun
  // of the same job) appends to what is there. Every call below returns
  // false when a file operation failed; error() says which and why.
  bool open(JobId job, bool keep_earlier_output = false);
  // Appends output of a job that is open; false for one that is not.
  bool append(JobId job, std::string_view bytes);
  // Writes what is buffered and forgets the job.
  bool close(JobId job);
  // Writes every job's buffered bytes.
  bool flush();

  // Jobs open / descriptors held right now.
  std::size_t open_jobs() const { return m_logs.size(); }
  std::size_t open_files() const { return m_open_files; }
  // The most recent failure, or empty.
  const std::string& error() const { return m_error; }

 private:
  struct Log {
    int fd = -1;
    std::string buffer;
    std::uint64_t last_use = 0;
    std::uint64_t end = 0;  // the file's size while open: where the next write lands
    // Write-behind: where writeback was last started, and up to where the
    // page cache was released (file offsets).
    std::uint64_t written_back = 0;
    std::uint64_t released = 0;
  };

  bool ensure_fd(JobId job, Log& log, bool create);
  bool write_out(JobId job, Log& log, std::string_view bytes);
  void write_behind(Log& log);
  bool drain(JobId job, Log& log);
  void close_fd(Log& log);
  void evict_one(JobId keep);

  std::string m_state_dir;
  std::size_t m_max_open;
  std::size_t m_buffer_size;
  std::size_t m_open_files = 0;
  std::uint64_t m_tick = 0;
  std::unordered_map<JobId, Log> m_logs;
  std::string m_error;
};

}  // namespace runner
