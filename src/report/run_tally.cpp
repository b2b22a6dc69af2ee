// Summing a run's jobs for `runner status`, and keeping the sum in the
// journal's checkpoint.
#include "runner/report/run_tally.h"

#include "runner/report/campaign.h"

namespace runner {

namespace {

using std::chrono::milliseconds;

milliseconds between(SystemTime from, SystemTime to) {
  return to > from ? std::chrono::duration_cast<milliseconds>(to - from) : milliseconds(0);
}

long long epoch_ms(SystemTime time) {
  return std::chrono::duration_cast<milliseconds>(time.time_since_epoch()).count();
}

}  // namespace

void tally_job(RunTally& tally, const CampaignJob& job, SystemTime end) {
  // An attempt that is run again counts by its last attempt.
  if (!job.rerun && !job.is_service()) {
    switch (job.outcome) {
      case JobOutcome::running:
        break;
      case JobOutcome::succeeded:
        ++tally.succeeded;
        break;
      case JobOutcome::failed:
        ++tally.failed;
        break;
      case JobOutcome::lost:
        ++tally.lost;
        break;
      case JobOutcome::unknown:
        ++tally.unknown;
        break;
    }
  }
  // A service's time says nothing of how long the jobs take.
  if (job.outcome != JobOutcome::running && job.outcome != JobOutcome::unknown &&
      !job.is_service()) {
    tally.slot_time += job.duration * static_cast<long long>(slots_held(job));
    ++tally.finished;
  }
  if (job.gpu) {
    tally.gpu_energy_j += job.gpu->energy_j;
    ++tally.gpu_jobs;
  }
  for (const CampaignTask& task : tasks_of(job)) {
    for (int i : task.slot_indices) {
      SlotTally& slot = tally.slots[{task.host, i}];
      if (job.gpu)
        slot.gpu_energy_j = slot.gpu_energy_j.value_or(0) +
                            job.gpu->energy_j / static_cast<double>(slots_held(job));
      slot.busy += between(task.start, end);
      ++slot.jobs;
      if (job.outcome != JobOutcome::running)
        slot.free_since = slot.free_since ? std::max(*slot.free_since, end) : end;
    }
  }
}

nlohmann::json tally_json(const RunTally& tally) {
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& [where, slot] : tally.slots)
    slots.push_back(
        {where.first, where.second, slot.busy.count(), slot.jobs,
         slot.free_since ? nlohmann::json(epoch_ms(*slot.free_since)) : nlohmann::json(nullptr),
         slot.gpu_energy_j ? nlohmann::json(*slot.gpu_energy_j) : nlohmann::json(nullptr)});
  nlohmann::json last =
      tally.last_event ? nlohmann::json(epoch_ms(*tally.last_event)) : nlohmann::json(nullptr);
  return {{"succeeded", tally.succeeded}, {"failed", tally.failed},
          {"last_event_ms", last},        {"lost", tally.lost},
          {"unknown", tally.unknown},     {"slot_time_ms", tally.slot_time.count()},
          {"finished", tally.finished},   {"slots", std::move(slots)},
          {"gpu_energy_j", tally.gpu_energy_j}, {"gpu_jobs", tally.gpu_jobs}};
}

std::optional<RunTally> tally_from_json(const nlohmann::json& json) {
  try {
    RunTally tally;
    tally.succeeded = json.at("succeeded").get<std::size_t>();
    tally.failed = json.at("failed").get<std::size_t>();
    tally.lost = json.at("lost").get<std::size_t>();
    tally.unknown = json.at("unknown").get<std::size_t>();
    tally.slot_time = milliseconds(json.at("slot_time_ms").get<long long>());
    tally.finished = json.at("finished").get<std::size_t>();
    tally.gpu_energy_j = json.value("gpu_energy_j", 0.0);  // (checkpoints from before it)
    tally.gpu_jobs = json.value("gpu_jobs", std::size_t{0});
    if (!json.at("last_event_ms").is_null())
      tally.last_event = SystemTime(milliseconds(json.at("last_event_ms").get<long long>()));
    for (const nlohmann::json& item : json.at("slots")) {
      SlotTally slot;
      slot.busy = milliseconds(item.at(2).get<long long>());
      slot.jobs = item.at(3).get<std::size_t>();
      if (!item.at(4).is_null())
        slot.free_since = SystemTime(milliseconds(item.at(4).get<long long>()));
      if (item.size() > 5 && !item.at(5).is_null())  // (checkpoints from before it)
        slot.gpu_energy_j = item.at(5).get<double>();
      tally.slots[{item.at(0).get<std::string>(), item.at(1).get<int>()}] = slot;
    }
    return tally;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace runner
