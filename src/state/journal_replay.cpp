#include "runner/state/journal_replay.h"

#include <map>

#include "runner/state/journal_text.h"

namespace runner {

namespace {

std::string text(const nlohmann::json& record, const char* key) {
  return journal_text(record, key);
}

template <typename Number>
Number number(const nlohmann::json& record, const char* key) {
  auto it = record.find(key);
  return it != record.end() && it->is_number() ? it->get<Number>() : Number{};
}

}  // namespace

JournalReplay replay_journal(const std::vector<nlohmann::json>& records) {
  std::map<JobId, UnfinishedJob> jobs;  // every job's latest state
  std::map<std::string, OpenRun> runs;
  std::vector<std::string> run_order;
  for (const nlohmann::json& record : records) {
    std::string event = text(record, "event");
    if (event == "run_start") {
      OpenRun run{text(record, "run"), number<long>(record, "pid"), text(record, "time")};
      if (runs.emplace(run.run, run).second) run_order.push_back(run.run);
    } else if (event == "run_end") {
      runs.erase(text(record, "run"));
    } else if (event == "job_start") {
      JobId id = number<JobId>(record, "job");
      jobs[id] = UnfinishedJob{id, text(record, "host"), {}, true, record, {}};
    } else if (event == "job_pgid") {
      auto it = jobs.find(number<JobId>(record, "job"));
      if (it == jobs.end()) continue;
      int rank = record.contains("rank") ? number<int>(record, "rank") : 0;
      ProcessGroup group{number<long>(record, "pgid"), text(record, "mark")};
      if (rank == 0)
        it->second.group = std::move(group);
      else
        it->second.rank_groups[rank] = std::move(group);
    } else if (event == "job_end") {
      auto it = jobs.find(number<JobId>(record, "job"));
      if (it == jobs.end()) continue;
      auto rerun = record.find("rerun");
      if (rerun != record.end() && rerun->is_boolean() && rerun->get<bool>()) {
        it->second.running = false;
        it->second.group = {};
        it->second.rank_groups.clear();
      } else {
        jobs.erase(it);
      }
    }
  }
  JournalReplay replay;
  for (auto& [id, job] : jobs) replay.unfinished.push_back(std::move(job));
  for (const std::string& run : run_order)
    if (auto it = runs.find(run); it != runs.end()) replay.open_runs.push_back(it->second);
  return replay;
}

}  // namespace runner
