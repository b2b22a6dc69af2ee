// `runner status`: a run's counts, slots and failures, as text and JSON.
#include "runner/report/status_view.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <map>

#include "runner/state/journal.h"
#include "runner/ui/line_wrap.h"
#include "runner/ui/status_line.h"
#include "runner/ui/summary.h"

namespace runner {

namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

milliseconds between(SystemTime from, SystemTime to) {
  return to > from ? duration_cast<milliseconds>(to - from) : milliseconds(0);
}

std::string state_of(const CampaignRun& run) {
  if (run.alive) return "running";
  if (!run.end) return "stopped";
  if (run.status == "ok") return "finished";
  return run.status.empty() ? "finished" : run.status;
}

// "#12", or "#12 rank 1" for a gang job's task.
std::string job_on_slot(const SlotStatus& slot) {
  if (!slot.job) return "-";
  if (!slot.job->is_gang()) return fmt::format("#{}", slot.job->id);
  return fmt::format("#{} rank {}", slot.job->id, slot.rank);
}

// What runs on the slot: its job's command, or its gang task's.
const std::string& command_on_slot(const SlotStatus& slot) {
  const CampaignTask* task = find_task(*slot.job, slot.rank);
  return task ? task->command : slot.job->command;
}

nlohmann::ordered_json params_json(const Params& params) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const auto& [key, value] : params) object[key] = value;
  return object;
}

// A gang job's nodes, failed rank and tasks, added to its JSON entry (whose
// slot, host and command are rank 0's).
void add_gang_fields(nlohmann::ordered_json& entry, const CampaignJob& job,
                     const std::string& state_dir) {
  if (!job.is_gang()) return;
  entry["nodes"] = job.tasks.size();
  entry["failed_rank"] =
      job.failed_rank ? nlohmann::ordered_json(*job.failed_rank) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json tasks = nlohmann::ordered_json::array();
  for (const CampaignTask& task : job.tasks)
    tasks.push_back({{"rank", task.rank},
                     {"host", task.host},
                     {"slot", task.slot},
                     {"command", task.command},
                     {"pgid", task.pgid},
                     {"log", task_log_path(state_dir, job.id, task.rank)}});
  entry["tasks"] = std::move(tasks);
}

}  // namespace

std::string format_local_time(SystemTime time) {
  time_t seconds = std::chrono::system_clock::to_time_t(time);
  struct tm local {};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

std::string describe_run_state(const std::string& state) {
  if (state == "failed") return "finished with failures";
  if (state == "stopped") return "stopped without finishing";
  return state;
}

RunStatus run_status(const Campaign& campaign, const CampaignRun& run,
                     std::optional<std::size_t> queued, SystemTime now) {
  RunStatus status;
  status.run = &run;
  status.state = state_of(run);
  status.now = now;
  SystemTime until = run.alive ? now : run.end.value_or(run.last_event);
  status.until = until;
  status.elapsed = between(run.start, until);
  status.queued = queued;

  RunTally tally = run.tally;
  for (std::size_t index : run.jobs) {
    const CampaignJob& job = campaign.jobs[index];
    tally_job(tally, job, job_end_time(job, &run, until));
    // An attempt that is run again counts by its last attempt.
    if (job.rerun || job.is_service()) continue;
    if (job.outcome == JobOutcome::running) status.running.push_back(&job);
    if (job.outcome == JobOutcome::failed || job.outcome == JobOutcome::lost)
      status.failures.push_back(&job);
  }
  status.succeeded = tally.succeeded;
  status.failed = tally.failed;
  status.lost = tally.lost;
  status.unknown = tally.unknown;
  if (tally.gpu_jobs > 0) status.gpu_energy_j = tally.gpu_energy_j;

  std::map<std::pair<std::string, int>, std::size_t> slot_of;
  for (const CampaignSlot& slot : run.slots) {
    slot_of[{slot.host, slot.index}] = status.slots.size();
    SlotStatus entry;
    entry.slot = slot;
    entry.free_since = run.start;
    if (auto it = tally.slots.find({slot.host, slot.index}); it != tally.slots.end()) {
      entry.busy = it->second.busy;
      entry.jobs = it->second.jobs;
      entry.gpu_energy_j = it->second.gpu_energy_j;
      if (it->second.free_since) entry.free_since = std::max(run.start, *it->second.free_since);
    }
    status.slots.push_back(std::move(entry));
  }
  for (const auto& [host, message] : run.host_failures) {
    for (SlotStatus& slot : status.slots)
      if (slot.slot.host == host) slot.down = message;
  }
  for (std::size_t index : run.jobs) {
    const CampaignJob& job = campaign.jobs[index];
    if (job.outcome != JobOutcome::running) continue;
    for (const CampaignTask& task : tasks_of(job)) {
      for (int i : task.slot_indices) {
        auto it = slot_of.find({task.host, i});
        if (it == slot_of.end()) continue;
        status.slots[it->second].job = &job;
        status.slots[it->second].rank = task.rank;
      }
    }
  }
  std::sort(status.failures.begin(), status.failures.end(),
            [](const CampaignJob* a, const CampaignJob* b) { return a->id < b->id; });
  for (const SlotStatus& slot : status.slots)
    if (slot.job) ++status.busy_slots;
  status.services = run_services(campaign, run);

  if (run.alive && tally.finished > 0) {
    std::vector<RunningShare> running;
    for (const CampaignJob* job : status.running)
      running.push_back({between(job->start, now), slots_held(*job)});
    std::size_t usable =
        static_cast<std::size_t>(std::count_if(status.slots.begin(), status.slots.end(),
                                               [](const SlotStatus& s) { return s.down.empty(); }));
    std::size_t runs_per_job = run.mode == "broadcast" ? std::max<std::size_t>(1, usable) : 1;
    status.eta = estimate_remaining(tally.slot_time / static_cast<long long>(tally.finished),
                                    queued.value_or(0) * runs_per_job, running, usable);
  }
  return status;
}

std::string format_status(const RunStatus& status, const std::string& state_dir, std::size_t width,
                          std::size_t max_failures) {
  const CampaignRun& run = *status.run;
  std::string text;
  std::string verb =
      status.state == "running" ? "running for" : describe_run_state(status.state) + " after";
  text += fmt::format("{} run {} (pid {}): {} {}, since {}\n", run.mode, run.id, run.pid, verb,
                      format_duration(status.elapsed), format_local_time(run.start));

  std::size_t done = status.succeeded + status.failed + status.lost + status.unknown;
  std::string counts =
      fmt::format("jobs: {} done ({} succeeded, {} failed", done, status.succeeded, status.failed);
  if (status.lost) counts += fmt::format(", {} lost", status.lost);
  if (status.unknown) counts += fmt::format(", {} unknown", status.unknown);
  counts += fmt::format(") · {} running", status.running.size());
  counts += status.queued ? fmt::format(" · {} queued", *status.queued) : " · ? queued";
  if (status.eta) counts += " · ETA " + format_short_duration(*status.eta);
  text += counts + "\n";
  std::size_t down =
      static_cast<std::size_t>(std::count_if(status.slots.begin(), status.slots.end(),
                                             [](const SlotStatus& s) { return !s.down.empty(); }));
  text += fmt::format("slots: {} of {} busy", status.busy_slots, status.slots.size());
  if (down) text += fmt::format(", {} down", down);
  if (status.gpu_energy_j)
    text += fmt::format(" · GPU energy {} so far", format_energy(*status.gpu_energy_j));
  text += "\n";

  if (!status.slots.empty()) {
    std::size_t label_width = 4;
    for (const SlotStatus& slot : status.slots)
      label_width = std::max(label_width, display_columns(slot.slot.label));
    std::size_t job_width = 3;
    for (const SlotStatus& slot : status.slots)
      job_width = std::max(job_width, job_on_slot(slot).size());
    bool energy_column = std::any_of(status.slots.begin(), status.slots.end(),
                                     [](const SlotStatus& s) { return s.gpu_energy_j; });
    std::string head = fmt::format("{}  {}  {}  {}  {}  {}", pad_to_columns("SLOT", label_width),
                                   pad_to_columns("STATE", 7), pad_to_columns("JOB", job_width),
                                   pad_to_columns("FOR", 8), "BUSY",
                                   energy_column ? "GPU ENERGY  " : "");
    std::size_t command_width =
        width > display_columns(head) + 20 ? width - display_columns(head) : 20;
    text += "\n" + head + "COMMAND\n";
    for (const SlotStatus& slot : status.slots) {
      std::string state = !slot.down.empty()                   ? "down"
                          : slot.job && slot.job->is_service() ? "service"
                          : slot.job                           ? "running"
                                                               : "idle";
      std::string job = job_on_slot(slot);
      std::string since;
      if (slot.job) {
        since = format_short_duration(between(slot.job->start, status.now));
      } else if (slot.down.empty() && status.state == "running") {
        since = format_short_duration(between(slot.free_since, status.now));
      }
      long long busy =
          status.elapsed.count() > 0
              ? std::min<long long>(100, slot.busy.count() * 100 / status.elapsed.count())
              : 0;
      std::string what = slot.job ? shorten_command(command_on_slot(slot), command_width)
                                  : shorten_command(slot.down, command_width);
      std::string energy;
      if (energy_column)
        energy = pad_to_columns(slot.gpu_energy_j ? format_energy(*slot.gpu_energy_j) : "-", 10) + "  ";
      std::string line =
          fmt::format("{}  {}  {}  {}  {:>3}%  {}{}", pad_to_columns(slot.slot.label, label_width),
                      pad_to_columns(state, 7), pad_to_columns(job, job_width),
                      pad_to_columns(since, 8), busy, energy, what);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      text += line + "\n";
    }
  }

  std::string gangs;
  for (const CampaignJob* job : status.running)
    if (job->is_gang())
      gangs += fmt::format("  #{} [{}] running for {}\n", job->id, describe_placement(*job),
                           format_short_duration(between(job->start, status.now)));
  if (!gangs.empty()) text += "\nrunning gang jobs:\n" + gangs;
  if (!status.services.empty()) text += "\n" + format_services(status.services, status.now);

  if (!status.failures.empty()) {
    std::size_t shown = std::min(max_failures, status.failures.size());
    text += fmt::format(
        "\nfailed: {} job{}{}\n", status.failures.size(), status.failures.size() == 1 ? "" : "s",
        shown < status.failures.size() ? fmt::format(", the latest {}", shown) : "");
    for (std::size_t i = status.failures.size() - shown; i < status.failures.size(); ++i) {
      const CampaignJob& job = *status.failures[i];
      text += fmt::format("  #{} [{}] {} after {} — log: {}\n", job.id, describe_placement(job),
                          describe_end(job), format_duration(job.duration),
                          end_log_path(state_dir, job));
      text += "      " + shorten_command(job.command, width > 10 ? width - 6 : 94) + "\n";
    }
  }
  return text;
}

nlohmann::ordered_json status_json(const RunStatus& status, const std::string& state_dir) {
  using nlohmann::ordered_json;
  const CampaignRun& run = *status.run;
  auto ms = [](milliseconds d) { return d.count(); };
  ordered_json out;
  out["state_dir"] = state_dir;
  ordered_json r;
  r["id"] = run.id;
  r["pid"] = run.pid;
  r["mode"] = run.mode;
  r["state"] = status.state;
  r["started"] = format_utc_time(run.start);
  r["ended"] = run.end ? ordered_json(format_utc_time(*run.end)) : ordered_json(nullptr);
  r["elapsed_ms"] = ms(status.elapsed);
  r["hosts_file"] = run.hosts_file;
  r["queue_file"] = run.queue_file;
  out["run"] = std::move(r);

  ordered_json jobs;
  jobs["done"] = status.succeeded + status.failed + status.lost + status.unknown;
  jobs["succeeded"] = status.succeeded;
  jobs["failed"] = status.failed;
  jobs["lost"] = status.lost;
  jobs["unknown"] = status.unknown;
  jobs["running"] = status.running.size();
  jobs["queued"] = status.queued ? ordered_json(*status.queued) : ordered_json(nullptr);
  out["jobs"] = std::move(jobs);
  out["eta_ms"] = status.eta ? ordered_json(ms(*status.eta)) : ordered_json(nullptr);
  out["busy_slots"] = status.busy_slots;
  out["gpu_energy_j"] =
      status.gpu_energy_j ? ordered_json(*status.gpu_energy_j) : ordered_json(nullptr);

  ordered_json slots = ordered_json::array();
  for (const SlotStatus& slot : status.slots) {
    ordered_json s;
    s["label"] = slot.slot.label;
    s["host"] = slot.slot.host;
    s["index"] = slot.slot.index;
    s["params"] = params_json(slot.slot.params);
    s["state"] = !slot.down.empty() ? "down" : slot.job ? "running" : "idle";
    s["job"] = slot.job ? ordered_json(slot.job->id) : ordered_json(nullptr);
    if (slot.job && slot.job->is_gang()) s["rank"] = slot.rank;
    s["for_ms"] = slot.job ? ms(between(slot.job->start, status.now))
                           : ms(between(slot.free_since, status.until));
    s["busy_ms"] = ms(slot.busy);
    s["jobs"] = slot.jobs;
    s["gpu_energy_j"] =
        slot.gpu_energy_j ? ordered_json(*slot.gpu_energy_j) : ordered_json(nullptr);
    s["down"] = slot.down.empty() ? ordered_json(nullptr) : ordered_json(slot.down);
    slots.push_back(std::move(s));
  }
  out["slots"] = std::move(slots);

  ordered_json running = ordered_json::array();
  for (const CampaignJob* job : status.running) {
    running.push_back({{"id", job->id},
                       {"slot", job->slot},
                       {"host", job->host},
                       {"command", job->command},
                       {"started", format_utc_time(job->start)},
                       {"running_ms", ms(between(job->start, status.now))},
                       {"pgid", job->pgid},
                       {"log", end_log_path(state_dir, *job)}});
    add_gang_fields(running.back(), *job, state_dir);
  }
  out["running"] = std::move(running);

  ordered_json failed = ordered_json::array();
  for (const CampaignJob* job : status.failures) {
    failed.push_back(
        {{"id", job->id},
         {"slot", job->slot},
         {"command", job->command},
         {"outcome", std::string(outcome_name(job->outcome))},
         {"exit", job->exit ? ordered_json(*job->exit) : ordered_json(nullptr)},
         {"signal", job->signal.empty() ? ordered_json(nullptr) : ordered_json(job->signal)},
         {"error", job->error.empty() ? ordered_json(nullptr) : ordered_json(job->error)},
         {"duration_ms", ms(job->duration)},
         {"log", end_log_path(state_dir, *job)}});
    add_gang_fields(failed.back(), *job, state_dir);
  }
  out["failed"] = std::move(failed);
  out["services"] = services_json(status.services, status.now);
  return out;
}

}  // namespace runner
