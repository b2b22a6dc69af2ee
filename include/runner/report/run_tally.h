// What a run's jobs add up to in `runner status`: its counts (a job by its
// last attempt, services apart), the time its ended jobs took, and each
// slot's busy time, jobs and last free moment. run_status sums a run's jobs
// into a copy of the run's own tally, which holds what jobs compacted out of
// the journal's checkpoint (campaign_index) added up to.
//
// Threading: none.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace runner {

struct CampaignJob;
using SystemTime = std::chrono::system_clock::time_point;

struct SlotTally {
  std::chrono::milliseconds busy{0};
  std::size_t jobs = 0;
  std::optional<SystemTime> free_since;  // the latest end of a job on it
  // Its share of the GPU energy of the jobs it ran whose GPUs were read (a
  // job's energy split evenly over the slots it held).
  std::optional<double> gpu_energy_j;
};

struct RunTally {
  std::size_t succeeded = 0;
  std::size_t failed = 0;
  std::size_t lost = 0;
  std::size_t unknown = 0;
  std::chrono::milliseconds slot_time{0};  // ended jobs' durations times their slots
  std::size_t finished = 0;                // ended jobs, services apart
  std::map<std::pair<std::string, int>, SlotTally> slots;  // by host and slot index
  std::optional<SystemTime> last_event;  // the run's latest record among those compacted
  double gpu_energy_j = 0;    // of the attempts whose GPUs were read
  std::size_t gpu_jobs = 0;   // those attempts
};

// Adds a job whose slots were busy until `end` (job_end_time).
void tally_job(RunTally& tally, const CampaignJob& job, SystemTime end);

nlohmann::json tally_json(const RunTally& tally);
// nullopt when `json` is not one tally_json wrote.
std::optional<RunTally> tally_from_json(const nlohmann::json& json);

}  // namespace runner
