#include "runner/cli/resume.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "runner/config/config_error.h"
#include "runner/config/duration.h"
#include "runner/state/journal_text.h"

namespace runner {

namespace {

bool process_alive(long pid) {
  if (pid <= 0 || pid == getpid()) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

template <typename T>
T field(const nlohmann::json& record, const char* key, T fallback) {
  auto it = record.find(key);
  if (it == record.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

// A record's object of names and texts (job parameters, metrics), in its order.
Params params_field(const nlohmann::json& record, const char* key) {
  Params params;
  auto object = record.find(key);
  if (object != record.end() && object->is_object())
    for (auto it = object->begin(); it != object->end(); ++it)
      params.emplace_back(it.key(), it->is_string() || it->is_object() ? journal_text(*it)
                                                                       : it->dump());
  return params;
}

// The job as the queue gave it, from its job_start record.
JobSpec spec_of(const nlohmann::json& start) {
  JobSpec spec;
  spec.command = start.contains("template") ? journal_text(start, "template")
                                            : journal_text(start, "command");
  spec.slots = field<int>(start, "slots_needed", 1);
  spec.line = field<int>(start, "line", 0);
  spec.timeout_text = journal_text(start, "timeout");
  if (!spec.timeout_text.empty()) spec.timeout = parse_duration(spec.timeout_text);
  if (start.contains("retries")) spec.retries = field<int>(start, "retries", 0);
  spec.cancel = journal_text(start, "cancel");
  if (start.contains("nodes")) spec.nodes = field<int>(start, "nodes", 1);
  spec.params = params_field(start, "params");
  spec.metrics = params_field(start, "metrics");
  spec.outputs = journal_text(start, "outputs");
  spec.outputs_cleanup = field<bool>(start, "outputs_cleanup", false);
  return spec;
}

// -1: no longer in the hosts file.
int host_index(const Fleet& fleet, const std::string& name) {
  for (std::size_t h = 0; h < fleet.hosts.size(); ++h)
    if (fleet.hosts[h].name == name) return static_cast<int>(h);
  return -1;
}

// The process groups that ranks 1 and up of a job spanning hosts left, on
// hosts still in the hosts file.
std::vector<std::pair<int, ProcessGroup>> other_ranks(const UnfinishedJob& job,
                                                      const Fleet& fleet) {
  std::vector<std::pair<int, ProcessGroup>> groups;
  auto tasks = job.start.find("tasks");
  if (tasks == job.start.end() || !tasks->is_array()) return groups;
  for (const nlohmann::json& task : *tasks) {
    auto group = job.rank_groups.find(field<int>(task, "rank", 0));
    if (group == job.rank_groups.end()) continue;
    int host = host_index(fleet, journal_text(task, "host"));
    if (host >= 0) groups.emplace_back(host, group->second);
  }
  return groups;
}

}  // namespace

std::vector<OrphanJob> jobs_to_resume(const JournalReplay& replay, const Fleet& fleet,
                                      const std::string& journal_path, bool resume) {
  for (const OpenRun& run : replay.open_runs)
    if (process_alive(run.pid))
      throw ConfigError(fmt::format(
          "another runner (pid {}, started {}) is running on this queue; its journal is {}. "
          "Stop it first, or give this run its own --state-dir",
          run.pid, run.started, journal_path));

  std::vector<OrphanJob> orphans;
  for (const UnfinishedJob& job : replay.unfinished) {
    OrphanJob orphan;
    orphan.id = job.id;
    orphan.spec = spec_of(job.start);
    if (job.running) orphan.group = job.group;
    orphan.attempt = field<int>(job.start, "attempt", 1);
    orphan.requeues = field<int>(job.start, "requeues", 0);
    orphan.was_running = job.running;
    orphan.host = host_index(fleet, job.host);
    if (job.running) orphan.other_ranks = other_ranks(job, fleet);
    orphans.push_back(std::move(orphan));
  }
  if (orphans.empty() || resume) return orphans;

  std::string list;
  for (std::size_t i = 0; i < replay.unfinished.size() && i < 10; ++i) {
    const UnfinishedJob& job = replay.unfinished[i];
    list += fmt::format("\n  #{} on {}{}: {}", job.id, job.host,
                        job.group.id ? fmt::format(" (process group {})", job.group.id) : "",
                        journal_text(job.start, "command"));
  }
  if (replay.unfinished.size() > 10)
    list += fmt::format("\n  ... and {} more", replay.unfinished.size() - 10);
  throw ConfigError(fmt::format(
      "the last run on this queue stopped without finishing {} job{} (see {}):{}\n"
      "Run again with --resume: it checks each job's process group on its host, kills what is "
      "left, and runs those jobs again first.",
      replay.unfinished.size(), replay.unfinished.size() == 1 ? "" : "s", journal_path, list));
}

}  // namespace runner
