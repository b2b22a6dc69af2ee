// The journal's records: one struct per kind of line, the one schema by
// which the journal is written (journal_line) and read back (read_record).
// Every line is a JSON object with "event" and "time" (UTC,
// "2024-05-01T12:34:56.789Z") first, then the record's fields, in the order
// the structs below give them; what is optional is left out when it has no
// value. Strings are kept byte for byte (journal_text.h).
//
// Reading is lenient, as journals of older versions need: a field that is
// missing or of another type reads as its default. A line that is not a
// JSON object, or whose event is not one of these, is not a record.
//
// Pure. Threading: any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runner/config/gpu_energy.h"
#include "runner/config/params.h"
#include "runner/core/job_exit.h"
#include "runner/core/output_file.h"
#include "runner/core/process_group.h"
#include "runner/core/result.h"

namespace runner {

// One slot of the fleet, as run_start records it.
struct RunSlotRecord {
  std::string label;  // "node01 gpu=0"
  std::string host;   // hostname
  int index = 0;      // position among its host's slots
  Params params;      // host parameters

  bool operator==(const RunSlotRecord&) const = default;
};

// run_start: a run began.
struct RunStartRecord {
  static constexpr std::string_view k_event = "run_start";
  std::string time;
  std::string run;  // the run's id ("3f9a1c07")
  long pid = 0;
  std::string mode;  // "queue" or "broadcast"
  std::string hosts_file;
  std::string queue_file;
  std::optional<std::string> cwd;  // the runner's working directory
  // The fleet; none in journals of versions that did not record it.
  std::optional<std::vector<RunSlotRecord>> slots;
  std::optional<std::size_t> queued;  // jobs in the queue when the run started

  bool operator==(const RunStartRecord&) const = default;
};

// One rank of a job that spans hosts, as job_start records it.
struct TaskStartRecord {
  int rank = 0;
  std::string host;
  std::string slot;
  std::vector<int> slot_indices;
  std::string command;

  bool operator==(const TaskStartRecord&) const = default;
};

// What job_start and job_taken_ahead both record of a job as the queue
// gave it: enough to run it again elsewhere (after a crash, `--resume`).
struct RecordedJobKeys {
  Params params;  // the job's parameters
  int line = 0;   // queue.yaml line of its entry
  // The command as the queue wrote it (read as `command` from journals
  // that did not record it).
  std::string template_command;
  int slots_needed = 1;
  std::string timeout;  // as written; empty: none
  std::optional<int> retries;
  std::string cancel;            // `cancel:` template; empty: none
  Params metrics;                // `metrics:`: name → regex
  std::string outputs;           // `outputs:` as written; empty: none
  bool outputs_cleanup = false;  // `outputs_cleanup: true`

  bool operator==(const RecordedJobKeys&) const = default;
};

// job_start: an attempt of a job was sent to its slots.
struct JobStartRecord : RecordedJobKeys {
  static constexpr std::string_view k_event = "job_start";
  std::string time;
  JobId job = 0;
  std::string run;      // the id of the run that started it
  std::string command;  // rendered
  std::string slot;     // slot label, "node01 gpu=0"
  std::string host;     // hostname
  // The job's slot indices on its host: "slot_index" holds the first,
  // "slot_indices" all of them when there are several.
  std::vector<int> slot_indices;
  int attempt = 1;               // 2 and up: a rerun of the same job
  int requeues = 0;              // times put back after its host was lost
  std::string service;           // `service:`: its name, or "true"; empty: not one
  std::optional<int> nodes;      // `nodes:`: a job that spans hosts
  // With `nodes:`, every rank (rank 0's fields are the job's); read only then.
  std::vector<TaskStartRecord> tasks;

  bool operator==(const JobStartRecord&) const = default;
};

// job_taken_ahead: a job a take of a long queue removed from the file
// ahead of need, to start later in the run (before anything still in the
// file): what job_start would record to run it again, as the queue gave
// it. With no job_start after it, it never started.
struct JobTakenAheadRecord : RecordedJobKeys {
  static constexpr std::string_view k_event = "job_taken_ahead";
  std::string time;
  JobId job = 0;
  std::string run;  // the id of the run that took it
  std::optional<int> nodes;

  bool operator==(const JobTakenAheadRecord&) const = default;
};

// job_pgid: a task's process group, which its processes carry a mark of.
struct JobPgidRecord {
  static constexpr std::string_view k_event = "job_pgid";
  std::string time;
  JobId job = 0;
  ProcessGroup group;
  std::optional<int> rank;  // for a job of `nodes:`

  bool operator==(const JobPgidRecord&) const = default;
};

// job_end: an attempt of a job ended.
struct JobEndRecord {
  static constexpr std::string_view k_event = "job_end";
  std::string time;
  JobId job = 0;
  std::optional<int> exit;  // its exit status, when it exited
  std::string signal;       // "TERM", ... when a signal ended it
  std::string error;        // could not start, or lost
  bool lost = false;
  bool timed_out = false;
  bool cancelled = false;
  bool rerun = false;  // the job goes back to the queue and starts again
  std::chrono::milliseconds duration{0};
  std::optional<int> failed_rank;  // the rank whose end stopped the others
  // Its GPUs' figures, in journals of versions that wrote them here (now
  // job_gpu's).
  std::optional<GpuFigures> gpu;

  bool operator==(const JobEndRecord&) const = default;
};

// job_gpu: the figures of an attempt's GPUs (gpu_figures_record.h), once
// their readings of its time came: after its job_end, maybe after the next
// attempt started.
// How long after its job_end a job's job_gpu may be written, at most.
inline constexpr std::chrono::seconds k_job_gpu_wait{5};

struct JobGpuRecord {
  static constexpr std::string_view k_event = "job_gpu";
  std::string time;
  JobId job = 0;
  int attempt = 0;                // 0: not recorded
  std::optional<GpuFigures> gpu;  // none: not readable

  bool operator==(const JobGpuRecord&) const = default;
};

// service_ready: a service passed its readiness checks.
struct ServiceReadyRecord {
  static constexpr std::string_view k_event = "service_ready";
  std::string time;
  JobId job = 0;
  std::chrono::milliseconds waited{0};  // since it was sent
  Params variables;                     // what its `ready_log` gave

  bool operator==(const ServiceReadyRecord&) const = default;
};

// outputs: one attempt of a job's `outputs:` (one rank's) brought back.
struct OutputsRecord {
  static constexpr std::string_view k_event = "outputs";
  std::string time;
  JobId job = 0;
  int attempt = 0;  // 0: not recorded
  std::optional<int> rank;
  std::string dir;                // where they were brought back into
  std::vector<OutputFile> files;  // a file whose SHA-256 could not be read has none
  std::string missing;            // what was not found; empty: nothing
  std::string error;              // why none came back; empty: no failure

  bool operator==(const OutputsRecord& other) const;
};

// host_failed: a host could not be used.
struct HostFailedRecord {
  static constexpr std::string_view k_event = "host_failed";
  std::string time;
  std::string host;
  std::string message;

  bool operator==(const HostFailedRecord&) const = default;
};

// run_end: a run ended.
struct RunEndRecord {
  static constexpr std::string_view k_event = "run_end";
  std::string time;
  std::string run;
  std::string status;  // "ok", "failed", "interrupted"

  bool operator==(const RunEndRecord&) const = default;
};

using JournalRecord =
    std::variant<RunStartRecord, JobStartRecord, JobTakenAheadRecord, JobPgidRecord, JobEndRecord,
                 JobGpuRecord, ServiceReadyRecord, OutputsRecord, HostFailedRecord, RunEndRecord>;

// "run_start", "job_start", ...
std::string_view event_name(const JournalRecord& record);

// The job a record is about; nullopt for a run's or a host's record.
std::optional<JobId> record_job(const JournalRecord& record);

// The journal's line of `record`, its newline included.
std::string journal_line(const JournalRecord& record);

// The record of a journal line (without its newline). An error for a line
// that is not a JSON object or not of a known event.
Result<JournalRecord> read_record(std::string_view line);

// The record of a line's JSON value, as read_record reads it.
Result<JournalRecord> record_from_json(const nlohmann::json& value);

}  // namespace runner
