// The run journal: state_dir/journal.jsonl, an append-only file of JSON
// lines, one object per event, each with "event" and "time" (UTC,
// "2024-05-01T12:34:56.789Z"):
//   run_start   {run, pid, mode, hosts_file, queue_file}
//               (+ cwd, slots [{label, host, index, params}], queued: the
//               fleet and the number of queued jobs, when the run gives them)
//   job_start   {job, run, command, slot, host, slot_index, params, line,
//                template, slots_needed, attempt, requeues}
//               (+ slot_indices, when the job holds several slots; timeout,
//               retries, cancel, when the job has them)
//   job_pgid    {job, pgid}
//   job_end     {job, exit (int or null), signal, error (string or null),
//                lost, timed_out, cancelled, rerun, duration_ms}
//               A job that is run again (lost with its host, or failed with
//               retries left) has rerun: true and another job_start with the
//               same id and the next attempt number.
//   host_failed {host, message}
//   run_end     {status}
// Every record is one write() of a whole line to an O_APPEND descriptor, so
// readers never see half a record. Job ids continue across runs that share
// the state directory.
//
// Threading: none.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runner/config/params.h"
#include "runner/exec/transport.h"

namespace runner {

// What job_start records.
struct JobStartRecord {
  JobId job = 0;
  std::string command;            // rendered
  std::string slot;               // slot label, "node01 gpu=0"
  std::string host;               // hostname
  std::vector<int> slot_indices;  // the job's slot indices on its host
  Params params;                  // the job's parameters, file order
  int line = 0;                   // queue.yaml line of its entry
  // Enough to run the job again elsewhere (after a crash, `--resume`):
  std::string template_command;   // the command as the queue wrote it
  int slots_needed = 1;
  std::string timeout;            // as written; empty: none
  std::optional<int> retries;
  std::string cancel;             // `cancel:` template; empty: none
  int attempt = 1;                // 2 and up: a rerun of the same job
  int requeues = 0;               // times put back after its host was lost
};

// One slot of the fleet, as run_start records it.
struct RunSlotRecord {
  std::string label;  // "node01 gpu=0"
  std::string host;   // hostname
  int index = 0;      // position among its host's slots
  Params params;      // host parameters, file order
};

// What run_start records beyond mode and files.
struct RunStartRecord {
  std::string mode;  // "queue" or "broadcast"
  std::string hosts_file;
  std::string queue_file;
  std::vector<RunSlotRecord> slots;
  std::optional<std::size_t> queued;  // jobs in the queue when the run started
};

// Appends events to one state directory's journal.
class Journal {
 public:
  // Opens (creating) state_dir/journal.jsonl and reads it once to find the
  // largest job id used so far. A last line cut short by a crash is ended
  // with a newline so new records stay whole. `durable`: fdatasync after
  // every record. Throws StateError when the file cannot be opened or read.
  explicit Journal(const std::string& state_dir, bool durable = false);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const { return m_path; }
  // A short random id of this run ("3f9a1c07").
  const std::string& run_id() const { return m_run_id; }
  // 1 + the largest job id seen in the journal or handed out before.
  JobId next_job_id() { return ++m_last_job; }

  // Each returns false if the record could not be written; error() says why.
  bool run_start(std::string_view mode, std::string_view hosts_file, std::string_view queue_file);
  // run_start with the working directory, the fleet and the queued count.
  bool run_start(const RunStartRecord& record);
  bool job_start(const JobStartRecord& record);
  bool job_pgid(JobId job, long pgid);
  // `rerun`: the job goes back to the queue and will start again.
  bool job_end(JobId job, const JobExit& exit, std::chrono::milliseconds duration,
               bool rerun = false);
  bool host_failed(std::string_view host, std::string_view message);
  bool run_end(std::string_view status);

  // Makes every record written so far durable (fdatasync), if any is not.
  bool sync();
  // The first write failure, or empty.
  const std::string& error() const { return m_error; }

 private:
  bool append(const nlohmann::ordered_json& record);
  bool write_line(std::string_view line);

  std::string m_path;
  std::string m_run_id;
  int m_fd = -1;
  bool m_durable = false;
  bool m_unsynced = false;  // written since the last fdatasync
  JobId m_last_job = 0;
  std::string m_error;
};

// state_dir/journal.jsonl
std::string journal_path(const std::string& state_dir);

// "2024-05-01T12:34:56.789Z"
std::string format_utc_time(std::chrono::system_clock::time_point time);

// Every record of the journal at `path`, in order. Lines that are not JSON
// objects (a last line cut short by a crash) are skipped. A missing file has
// no records; a file that cannot be read throws StateError.
std::vector<nlohmann::json> read_journal(const std::string& path);

}  // namespace runner
