// What `runner status` shows about one run of a campaign: counts, an ETA,
// every slot with the job it runs (or how long it has idled), the running
// jobs and the failures; as a table for people and as JSON for scripts.
// Pure: the caller reads the journal and the queue and gives the time.
#pragma once

#include <chrono>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runner/report/campaign.h"
#include "runner/report/service_status.h"

namespace runner {

// One slot of the run.
struct SlotStatus {
  CampaignSlot slot;
  const CampaignJob* job = nullptr;   // running there now
  int rank = 0;                       // of its task there, when the job is a gang job
  std::chrono::milliseconds busy{0};  // time it ran jobs in this run
  std::size_t jobs = 0;               // jobs it ran or runs
  SystemTime free_since;              // when it last became free (or the run start)
  std::string down;                   // its host's failure, when the host is down
  std::optional<double> gpu_energy_j;  // its share of its ended jobs' GPU energy in this run
};

// A run as `runner status` sees it at one moment.
struct RunStatus {
  const CampaignRun* run = nullptr;
  // "running"; "finished", "failed", "interrupted" (its run_end); "stopped":
  // gone without a run_end.
  std::string state;
  SystemTime now;
  SystemTime until;  // `now` while the run is alive, else its end
  std::chrono::milliseconds elapsed{0};
  std::size_t succeeded = 0;
  std::size_t failed = 0;
  std::size_t lost = 0;
  std::size_t unknown = 0;
  // The counts and lists are of jobs: an attempt that was run again is left
  // out of them (its slot time counts), and so are services, which are
  // listed apart.
  std::vector<const CampaignJob*> running;   // start order
  std::vector<const CampaignJob*> failures;  // failed and lost, id order
  std::optional<std::size_t> queued;         // jobs in the queue file now
  std::optional<std::chrono::milliseconds> eta;
  std::vector<SlotStatus> slots;
  std::size_t busy_slots = 0;
  std::vector<ServiceStatus> services;
  // The GPU energy of its ended attempts so far, where their GPUs were read.
  std::optional<double> gpu_energy_j;
};

// The status of `run` (one of campaign.runs) at `now`, with `queued` jobs
// left in its queue (nullopt when unknown). The ETA is given only while the
// run is alive and at least one of its jobs finished.
RunStatus run_status(const Campaign& campaign, const CampaignRun& run,
                     std::optional<std::size_t> queued, SystemTime now);

// The table, every line ending in '\n', commands cut to fit `width` columns:
//   queue run 3f9a1c07 (pid 4242): running for 12m 03s, since 2024-05-01 12:34:56
//   jobs: 12 done (10 succeeded, 2 failed) · 4 running · 23 queued · ETA 34m 10s
//   slots: 4 of 8 busy · GPU energy 1.20 MJ so far
//
//   SLOT             STATE    JOB   FOR      BUSY  COMMAND
//   localhost gpu=0  running  #13   4m 02s    93%  python bench.py ...
//   localhost gpu=1  idle     -     2m 10s    40%
// (a column GPU ENERGY after BUSY, each slot's share of its ended jobs'
// energy, when some slot has one; a gang job's task shows as "#14 rank 1",
// with that rank's command; a
// slot a service holds is in state "service"), then the running gang jobs
// with their nodes, the services (format_services), and the latest
// failures with their logs.
std::string format_status(const RunStatus& status, const std::string& state_dir,
                          std::size_t width = 100, std::size_t max_failures = 5);

// The same as one JSON object (docs/watching.md documents its keys).
nlohmann::ordered_json status_json(const RunStatus& status, const std::string& state_dir);

// The state for people: "running", "finished", "finished with failures",
// "interrupted", "stopped without finishing".
std::string describe_run_state(const std::string& state);

// "2024-05-01 12:34:56" in the local time zone.
std::string format_local_time(SystemTime time);

}  // namespace runner
