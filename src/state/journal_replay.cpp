// Replaying the journal's records: each run's start and end, and each
// job's latest start (or its take ahead of need), process groups and end.
#include "runner/state/journal_replay.h"

#include <map>

namespace runner {

namespace {

// What job_start would have recorded of a job taken ahead, as far as it
// is known before it starts: how to run it, its attempt 0 (none ran).
JobStartRecord start_of(const JobTakenAheadRecord& taken) {
  JobStartRecord start;
  start.time = taken.time;
  start.job = taken.job;
  start.run = taken.run;
  start.command = taken.template_command;
  static_cast<RecordedJobKeys&>(start) = taken;
  start.attempt = 0;
  start.nodes = taken.nodes;
  return start;
}

// Every job's latest state and the runs without an end, as the records
// so far leave them.
struct Replay {
  std::map<JobId, UnfinishedJob> jobs;
  std::map<std::string, OpenRun> runs;
  std::vector<std::string> run_order;

  void operator()(const RunStartRecord& start) {
    if (runs.emplace(start.run, OpenRun{start.run, start.pid, start.time}).second)
      run_order.push_back(start.run);
  }
  void operator()(const RunEndRecord& end) { runs.erase(end.run); }
  void operator()(const JobStartRecord& start) {
    jobs[start.job] = UnfinishedJob{start.job, start.host, {}, true, start, {}};
  }
  // Out of the queue and not started: unfinished, and not running.
  void operator()(const JobTakenAheadRecord& taken) {
    jobs[taken.job] = UnfinishedJob{taken.job, {}, {}, false, start_of(taken), {}};
  }
  void operator()(const JobPgidRecord& pgid) {
    auto it = jobs.find(pgid.job);
    if (it == jobs.end()) return;
    if (pgid.rank.value_or(0) == 0)
      it->second.group = pgid.group;
    else
      it->second.rank_groups[*pgid.rank] = pgid.group;
  }
  void operator()(const JobEndRecord& end) {
    auto it = jobs.find(end.job);
    if (it == jobs.end()) return;
    if (end.rerun) {
      it->second.running = false;
      it->second.group = {};
      it->second.rank_groups.clear();
    } else {
      jobs.erase(it);
    }
  }
  // Nothing in them says whether a job or a run is finished.
  void operator()(const JobGpuRecord&) {}
  void operator()(const ServiceReadyRecord&) {}
  void operator()(const OutputsRecord&) {}
  void operator()(const HostFailedRecord&) {}
};

}  // namespace

JournalReplay replay_journal(const std::vector<JournalRecord>& records) {
  Replay fold;
  for (const JournalRecord& record : records) std::visit(fold, record);
  JournalReplay replay;
  for (auto& [id, job] : fold.jobs) replay.unfinished.push_back(std::move(job));
  for (const std::string& run : fold.run_order)
    if (auto it = fold.runs.find(run); it != fold.runs.end())
      replay.open_runs.push_back(it->second);
  return replay;
}

}  // namespace runner
