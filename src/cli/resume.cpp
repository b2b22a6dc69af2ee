#include "runner/cli/resume.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "runner/config/config_error.h"
#include "runner/sched/job_records.h"

namespace runner {

namespace {

bool process_alive(long pid) {
  if (pid <= 0 || pid == getpid()) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
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
  for (const TaskStartRecord& task : job.start.tasks) {
    auto group = job.rank_groups.find(task.rank);
    if (group == job.rank_groups.end()) continue;
    int host = host_index(fleet, task.host);
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
    orphan.spec = spec_from(job.start);
    orphan.spec.nodes = job.start.nodes;
    if (job.running) orphan.group = job.group;
    orphan.attempt = job.start.attempt;
    orphan.requeues = job.start.requeues;
    orphan.was_running = job.running;
    orphan.host = host_index(fleet, job.host);
    if (job.running) orphan.other_ranks = other_ranks(job, fleet);
    orphans.push_back(std::move(orphan));
  }
  if (orphans.empty() || resume) return orphans;

  std::string list;
  for (std::size_t i = 0; i < replay.unfinished.size() && i < 10; ++i) {
    const UnfinishedJob& job = replay.unfinished[i];
    std::string where = job.host.empty() ? " (taken ahead, never started)"
                        : job.group.id
                            ? fmt::format(" on {} (process group {})", job.host, job.group.id)
                            : " on " + job.host;
    list += fmt::format("\n  #{}{}: {}", job.id, where, job.start.command);
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
