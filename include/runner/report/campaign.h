// A campaign as its state directory tells it: the runs and jobs recorded in
// the journal (state/journal.h), for `runner status`, `runner log` and
// `runner report`. Reading only: nothing here writes to the state
// directory, so it is safe beside a running campaign.
//
// Threading: none.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/config/gpu_energy.h"
#include "runner/config/params.h"
#include "runner/core/job_exit.h"
#include "runner/core/output_file.h"
#include "runner/core/result.h"
#include "runner/report/log_files.h"  // the observing commands read logs beside the journal
#include "runner/report/run_tally.h"
#include "runner/state/journal_records.h"

namespace runner {

// How a job ended, or that it has not. `unknown`: its run is gone (killed,
// crashed) without recording the end.
enum class JobOutcome { running, succeeded, failed, lost, unknown };

// "running", "succeeded", "failed", "lost", "unknown"
std::string_view outcome_name(JobOutcome outcome);

// One slot of a run's fleet.
struct CampaignSlot {
  std::string label;  // "node01 gpu=0"
  std::string host;
  int index = 0;  // position among its host's slots
  Params params;
};

// One task of a gang job (a job with `nodes:`): its rank, on slots of its
// own host.
struct CampaignTask {
  int rank = 0;
  std::string host;
  std::string slot;  // its slots' label, "node02 gpu=0,1"
  std::vector<int> slot_indices;
  std::string command;  // rendered for its rank
  long pgid = 0;
  SystemTime start;  // its process's start (job_pgid); until known, when it was sent
};

// One attempt of a job of the journal (a job that is run again has one per
// attempt, under the same id).
struct CampaignJob {
  JobId id = 0;
  std::string run;      // id of the run that started it
  std::string command;  // rendered
  std::string slot;     // slot label, "node01 gpu=2,3" for a job on several
  std::string host;
  std::vector<int> slot_indices;  // on its host
  Params params;
  Params metrics;    // `metrics:`: name → regex finding its value in the log
  int line = 0;      // queue.yaml line of its entry
  SystemTime start;  // its process's start (job_pgid); until known, when it was sent
  std::optional<SystemTime> end;
  std::optional<int> exit;                // exit status when it exited
  std::string signal;                     // "TERM", ... when a signal ended it
  std::string error;                      // could not start, or lost
  std::chrono::milliseconds duration{0};  // recorded at its end; 0 before
  long pgid = 0;
  JobOutcome outcome = JobOutcome::running;
  int attempt = 1;         // 2 and up: a rerun of the same job id
  bool timed_out = false;  // stopped for running past its timeout
  bool cancelled = false;  // stopped by the runner (interrupt)
  bool rerun = false;      // this attempt ended, and the job runs again
  // A gang job's tasks in rank order, rank 0's being the job's own command,
  // slot and host above; empty for a job without `nodes:`.
  std::vector<CampaignTask> tasks;
  std::optional<int> failed_rank;  // the rank whose end failed a gang job
  // `service:`: its name, "true" for an unnamed one; empty for a job.
  std::string service;
  std::optional<SystemTime> ready_at;  // when this attempt of a service was ready
  Params ready_variables;              // what its `ready_log` gave later jobs
  // The folder its `outputs:` were brought back into, as the journal's
  // outputs record says (`--outputs-dir`); empty: none recorded.
  std::string outputs_folder;
  // The files brought back (a rank's under "<rank>/"), as recorded.
  std::vector<OutputFile> outputs;
  // Its GPUs' figures (energy, power, use) over this attempt, where read.
  std::optional<GpuFigures> gpu;

  bool is_gang() const { return !tasks.empty(); }
  bool is_service() const { return !service.empty(); }
};

// One run of `runner queue` or `runner broadcast`.
struct CampaignRun {
  std::string id;
  long pid = 0;
  std::string mode;  // "queue" or "broadcast"
  std::string hosts_file;
  std::string queue_file;
  std::string cwd;  // the runner's working directory, when recorded
  SystemTime start;
  SystemTime last_event;          // its latest record
  std::optional<SystemTime> end;  // run_end's time
  std::string status;             // run_end's: "ok", "failed", "interrupted"; empty without one
  bool alive = false;             // no run_end, and its process still exists
  // From run_start; for journals without them, the slots its jobs used.
  std::vector<CampaignSlot> slots;
  std::optional<std::size_t> queued_at_start;
  std::vector<std::pair<std::string, std::string>> host_failures;  // host, message
  std::vector<std::size_t> jobs;  // indices into Campaign::jobs, in start order
  // What its jobs compacted out of the journal's checkpoint added up to
  // (campaign_index); empty when every job is in `jobs`.
  RunTally tally;
};

// Everything one state directory's journal says.
struct Campaign {
  std::string state_dir;
  std::vector<CampaignRun> runs;  // in start order
  std::vector<CampaignJob> jobs;  // in start order
  // Lines of the journal that were not whole records, each said once
  // ("…/journal.jsonl line 12: not a whole record …; skipped").
  std::vector<std::string> skipped_lines;

  const CampaignJob* find_job(JobId id) const;
  const CampaignRun* find_run(std::string_view id) const;
  // The run started last, or nullptr for an empty journal.
  const CampaignRun* latest_run() const;
};

// Whether a process with this pid exists.
using PidAlive = std::function<bool(long pid)>;
bool process_alive(long pid);

// The campaign of these journal records. Job ends, pgids and
// host failures belong to the run their job (or the latest run) belongs
// to. Jobs without an end are `running` while their run is alive, and
// `unknown` once it is gone.
// `tallies`: what each run's compacted jobs added up to, by run id.
// `owners`, when given, gets for each record the index in Campaign::jobs of
// the job it is about, k_run_record for a run's own record, or
// k_orphan_record for one about a job not in the records.
constexpr std::ptrdiff_t k_run_record = -1;
constexpr std::ptrdiff_t k_orphan_record = -2;
Campaign campaign_from_records(const std::vector<JournalRecord>& records,
                               const PidAlive& alive = process_alive,
                               const std::map<std::string, RunTally>& tallies = {},
                               std::vector<std::ptrdiff_t>* owners = nullptr);

// The same fold over records that come one at a time: `records` calls the
// function it is given with each record, in order, and may drop the record
// once that returns. A long journal is folded so without all its records
// parsed at once.
using RecordFold = std::function<void(const JournalRecord& record)>;
using RecordSource = std::function<void(const RecordFold& fold)>;
Campaign campaign_from_records(const RecordSource& records, const PidAlive& alive = process_alive,
                               const std::map<std::string, RunTally>& tallies = {},
                               std::vector<std::ptrdiff_t>* owners = nullptr);

// Reads the whole journal (every segment), every job of it. An error when
// it cannot be read; a missing journal is an empty campaign.
Result<Campaign> load_campaign(const std::string& state_dir, const PidAlive& alive = process_alive);

// One "runner: warning: …" line per skipped journal line, for stderr.
std::string skipped_lines_warning(const Campaign& campaign);

// "2024-05-01T12:34:56.789Z" (format_utc_time's form); nullopt otherwise.
std::optional<SystemTime> parse_utc_time(std::string_view text);

// How the job ended, for people: "exit 3", "killed by TERM",
// "lost: connection dropped", "timed out (killed by TERM)", "cancelled
// (killed by INT)", "running", "unknown: the runner stopped ..."; after
// "rank 1: " when a gang job failed by a rank; ", run again" when it was.
std::string describe_end(const CampaignJob& job);

// Where the job ran, for people: its slot label, or for a gang job "2 nodes:
// node01, node02" (its hosts in rank order).
std::string describe_placement(const CampaignJob& job);

// A gang job's task of this rank, or nullptr.
const CampaignTask* find_task(const CampaignJob& job, int rank);

// Its tasks: a gang job's, or the one task of a job without `nodes:` (rank
// 0 on the job's slots), for views that draw every slot a job held.
std::vector<CampaignTask> tasks_of(const CampaignJob& job);

// The slots a job holds on all its hosts: its tasks' slots together.
std::size_t slots_held(const CampaignJob& job);

// The log that tells how the job ended: a gang job's failed rank's (else
// rank 0's), or the job's one log.
std::string end_log_path(const std::string& state_dir, const CampaignJob& job);

// Its end, or `now` for a job still running; an unknown job's end is its
// run's last event.
SystemTime job_end_time(const CampaignJob& job, const CampaignRun* run, SystemTime now);

// Parses "12" or "#12".
std::optional<JobId> parse_job_id(std::string_view text);

}  // namespace runner
