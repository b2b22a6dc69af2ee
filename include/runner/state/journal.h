// The run journal: state_dir/journal.jsonl, an append-only file of JSON
// lines, one record per line (journal_records.h says what each holds).
// A job that is run again (lost with its host, or failed with retries
// left) has rerun: true in its job_end and another job_start with the same
// id and the next attempt number.
//
// A record is written whole or not at all: one that cannot be written (a
// full disk) is kept and written, in order, before the next one, so nothing
// is lost while space returns; part of a record that did reach the file is
// cut off again (or, if that fails, ended with a newline before the next
// record), so no two records ever share a line. Job ids continue across runs
// that share the state directory.
//
// Threading: none.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/file_system.h"
#include "runner/core/job_exit.h"
#include "runner/core/result.h"
#include "runner/core/status.h"
#include "runner/state/journal_records.h"
#include "runner/state/journal_segments.h"  // its readers

namespace runner {

// The size past which the live journal file is sealed and a new one begun
// (journal_segments.h).
constexpr std::uint64_t k_journal_segment_bytes = 4u << 20;

// Appends events to one state directory's journal.
class Journal {
 public:
  // Opens (creating) state_dir/journal.jsonl and reads it once to find the
  // largest job id used so far (in the latest sealed segments too, when it
  // holds none). A last line cut short by a crash is ended
  // with a newline (before the first record, if it cannot be done now) so
  // new records stay whole. `durable`: fdatasync after every record. An
  // error when the file cannot be opened or read. `files` does the file
  // operations (a test's may fail them).
  static Result<Journal> open(const std::string& state_dir, bool durable = false,
                              FileSystem& files = real_file_system(),
                              std::uint64_t segment_bytes = k_journal_segment_bytes);
  Journal(Journal&&) = default;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const { return m_path; }
  // A short random id of this run ("3f9a1c07").
  const std::string& run_id() const { return m_run_id; }
  // 1 + the largest job id seen in the journal or handed out before.
  JobId next_job_id() { return ++m_last_job; }

  // Each writes the records still waiting, then its own. An error says why
  // the record could not be written now; it is kept and written before the
  // next one (or by sync()).
  // Each stamps its record with the time, and a run's start, a job's start
  // and a job taken ahead with this run's id (and pid).
  Status run_start(std::string_view mode, std::string_view hosts_file, std::string_view queue_file);
  // run_start with the working directory, the fleet and the queued count.
  Status run_start(RunStartRecord record);
  Status job_start(JobStartRecord record);
  Status job_taken_ahead(JobTakenAheadRecord record);
  Status job_pgid(JobId job, const ProcessGroup& group, std::optional<int> rank = std::nullopt);
  // `rerun`: the job goes back to the queue and will start again.
  Status job_end(JobId job, const JobExit& exit, std::chrono::milliseconds duration,
                 bool rerun = false, std::optional<int> failed_rank = std::nullopt);
  // The figures of the GPUs of the attempt `attempt` of a job, once read.
  Status job_gpu(JobId job, int attempt, const GpuFigures& gpu);
  // A service passed its readiness checks `waited` after it was sent.
  Status service_ready(JobId job, std::chrono::milliseconds waited, const Params& variables);
  // One attempt of a job's `outputs:` (one rank's) brought back into
  // `dir`: each file's path under it, size and SHA-256 (null when it could
  // not be read); what was not found; why none came back.
  Status outputs(JobId job, int attempt, std::optional<int> rank, std::string_view dir,
                 const std::vector<OutputFile>& files, std::string_view missing,
                 std::string_view error);
  Status host_failed(std::string_view host, std::string_view message);
  Status run_end(std::string_view status);

  // Writes the records still waiting, then makes every record written so far
  // durable (fdatasync). Ok when nothing waits and everything is synced.
  Status sync();
  // Records not written yet.
  std::size_t waiting() const { return m_waiting.size(); }

  // Bytes of records this journal wrote.
  std::uint64_t bytes_appended() const { return m_appended; }

  // Whether the live file has grown past its size limit, with every record
  // written and synced: the moment to rotate().
  bool wants_rotation() const;
  // Seals the live file as the next segment (state_dir/journal/NNNNNN.jsonl)
  // and begins a new, empty one. An error says why it could not; the live
  // file then goes on growing, and a later call tries again.
  Status rotate();

 private:
  Journal(const std::string& state_dir, bool durable, FileSystem& files,
          std::uint64_t segment_bytes);
  // Opens the live file and finds the largest job id (open's work).
  Status read_back();
  Status append(JournalRecord record);
  Status write_waiting();
  Status write_whole(std::string_view line);
  // Undoes the first `written` bytes of a record that could not be finished.
  void cut_partial(std::size_t written);

  FileSystem& m_files;
  std::string m_state_dir;
  std::string m_path;
  std::uint64_t m_segment_bytes;
  std::uint64_t m_size = 0;      // of the live file
  std::uint64_t m_appended = 0;  // bytes this journal wrote
  // For the live file's index when it is sealed: the jobs its records are
  // about, and whether it holds a run's start or end.
  std::vector<JobId> m_segment_jobs;
  bool m_segment_runs = false;
  std::string m_run_id;
  FileDescriptor m_fd;
  bool m_durable = false;
  bool m_unsynced = false;  // written since the last fdatasync
  bool m_line_open = false;  // the file ends in part of a line
  std::deque<std::string> m_waiting;  // whole lines, oldest first
  JobId m_last_job = 0;
};

// state_dir/journal.jsonl
std::string journal_path(const std::string& state_dir);

// "2024-05-01T12:34:56.789Z"
std::string format_utc_time(std::chrono::system_clock::time_point time);

}  // namespace runner
