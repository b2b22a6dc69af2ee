// The scheduler's side of hosts coming and going: a host that is ready, one
// that failed (reconnect with backoff, or give up), killing what lost and
// orphaned jobs left before a host's slots are used again, and setting aside
// a host where jobs cannot start, and the end of the allocation of them all.
// The rest of the scheduler is in scheduler.cpp.
#include <fmt/format.h>

#include "runner/sched/scheduler.h"

namespace runner {

namespace {

bool permanent(const Status& error) {
  return error.kind() == ErrorKind::auth || error.kind() == ErrorKind::host_key;
}

}  // namespace

void Scheduler::adopt_orphans(std::vector<OrphanJob> orphans) {
  for (OrphanJob& orphan : orphans) {
    // A job that spans hosts is run again once, for rank 0; what its other
    // ranks left is killed as a lost job's leftovers.
    for (auto& [host, group] : std::exchange(orphan.other_ranks, {}))
      if (!m_options.keep_orphans) m_hosts[host].leftover_groups.push_back(std::move(group));
    if (orphan.host >= 0 && orphan.group.id > 0) {
      m_hosts[orphan.host].orphans.push_back(std::move(orphan));
      continue;
    }
    if (orphan.was_running)
      m_observer.warning(
          orphan.host < 0
              ? fmt::format(
                    "job #{} ran on a host that is no longer in the hosts file; if it still "
                    "runs there, stop it by hand",
                    orphan.id)
              : fmt::format("job #{} had not reported its process group on {}; if it still runs "
                            "there, stop it by hand",
                            orphan.id, m_fleet.hosts[orphan.host].name));
    rerun_orphan(std::move(orphan));
  }
}

void Scheduler::rerun_orphan(OrphanJob orphan) {
  if (m_options.mode == Mode::broadcast) {
    m_observer.warning(fmt::format(
        "job #{} was one slot's share of a broadcast step; broadcast steps are not run again "
        "(it is in consumed.yaml)",
        orphan.id));
    return;
  }
  Job job;
  job.id = orphan.id;
  job.spec = std::move(orphan.spec);
  job.attempt = orphan.attempt + 1;
  job.requeues = orphan.requeues;
  if (job.spec.every_host) job.pinned_host = orphan.host;
  m_reruns.push_back(std::move(job));
}

void Scheduler::host_ready(int host) {
  m_hosts[host].was_ready = true;
  m_hosts[host].reconnect_tries = 0;
  if (m_hosts[host].needs_cleaning()) {
    m_hosts[host].state = HostState::cleaning;
    clean_host(host);
    return;
  }
  m_hosts[host].state = HostState::ready;
  m_observer.host_ready(m_fleet.hosts[host]);
  m_queue_dirty = true;
}

void Scheduler::host_failed(int host, const Status& error) {
  if (error.kind() == ErrorKind::ended) {
    fleet_ending(error);
    return;
  }
  if (m_hosts[host].state == HostState::set_aside) return;  // said once; stays aside
  bool was_ready = m_hosts[host].was_ready;
  bool retry = was_ready && !permanent(error) && !m_stopping &&
               (m_options.daemon || m_hosts[host].reconnect_tries < m_options.reconnect_tries);
  if (retry) {
    Clock::duration wait = m_hosts.reconnect_delay(m_hosts[host].reconnect_tries++);
    m_hosts[host].state = HostState::reconnecting;
    m_hosts[host].reconnect_at = m_options.clock() + wait;
    m_run_log.record_host_failed(m_fleet.hosts[host].name, error.message());
    m_observer.host_reconnecting(m_fleet.hosts[host], error, wait);
  } else {
    m_run_log.record_host_failed(m_fleet.hosts[host].name, error.message());
    m_observer.host_failed(m_fleet.hosts[host], error);
    m_hosts[host].state = HostState::failed;
    requeue_orphans(host, "its host could not be reached to check on it");
    // In broadcast mode every job was meant to run on this host too.
    if (m_options.mode == Mode::broadcast) ++m_failures;
  }
  m_queue_dirty = true;
}

void Scheduler::fleet_ending(const Status& why) {
  if (m_fleet_ending) return;
  m_fleet_ending = true;
  m_stopping = true;
  // Nothing is sent to them again, not even a cleanup: the allocation's
  // end kills what runs there.
  for (std::size_t host = 0; host < m_hosts.size(); ++host) m_hosts[host].state = HostState::failed;
  m_observer.warning(fmt::format(
      "{}: no more jobs start; the jobs it ends run again in the next run (runner queue "
      "--resume), and the queue file keeps the rest",
      why.message()));
}

void Scheduler::clean_live_hosts() {
  // A job lost alone (its channel broke, the host did not) may still run
  // there while it is rerun elsewhere: kill its group now. Lost with their
  // host, groups wait for the host to come back (host_ready).
  for (std::size_t host = 0; host < m_hosts.size(); ++host) {
    if (m_hosts[host].state != HostState::ready || m_hosts[host].leftover_groups.empty()) continue;
    m_hosts[host].state = HostState::cleaning;
    clean_host(static_cast<int>(host));
  }
}

void Scheduler::clean_host(int host) {
  // The losses are on disk before their leftovers are killed; if the journal
  // cannot be written, the observer has been told so, and the kill goes
  // ahead.
  static_cast<void>(m_run_log.sync());
  std::vector<ProcessGroup> groups = std::exchange(m_hosts[host].leftover_groups, {});
  std::vector<OrphanJob> orphans = std::exchange(m_hosts[host].orphans, {});
  for (const OrphanJob& orphan : orphans) groups.push_back(orphan.group);
  const std::string& name = m_fleet.hosts[host].name;
  m_executors[host]->kill_leftovers(
      groups, [this, host, name, orphans = std::move(orphans)](const LeftoverCheck& check) mutable {
        if (!check.error.empty() && !check.lost)
          m_observer.warning(
              fmt::format("{}: could not check for leftover processes: {}", name, check.error));
        std::size_t killed = check.killed.size();
        if (killed > 0)
          m_observer.notice(fmt::format("{}: killed {} leftover process group{} of lost jobs", name,
                                        killed, killed == 1 ? "" : "s"));
        for (long kept : check.kept)
          m_observer.warning(fmt::format(
              "{}: left process group {} alone: a lost job's group had that id, but none of its "
              "processes now carries the job's {}, so it is taken to be someone else's",
              name, kept, k_job_mark_variable));
        for (OrphanJob& orphan : orphans) rerun_orphan(std::move(orphan));
        if (check.lost) return;  // host_failed has decided what comes next
        m_hosts[host].state = HostState::ready;
        m_observer.host_ready(m_fleet.hosts[host]);
        m_queue_dirty = true;
      });
}

void Scheduler::requeue_orphans(int host, const std::string& why) {
  for (OrphanJob& orphan : std::exchange(m_hosts[host].orphans, {})) {
    m_observer.warning(fmt::format("job #{} (process group {} on {}): {}", orphan.id,
                                   orphan.group.id, m_fleet.hosts[host].name, why));
    rerun_orphan(std::move(orphan));
  }
}

void Scheduler::set_aside_refusing_hosts() {
  for (std::size_t host = 0; host < m_hosts.size(); ++host) {
    std::string reason = std::exchange(m_hosts[host].start_refusal, {});
    // A host that failed meanwhile is reconnected or given up as usual.
    if (reason.empty() || m_hosts[host].state != HostState::ready) continue;
    m_hosts[host].state = HostState::set_aside;
    Status why{ErrorKind::protocol,
               fmt::format("{}: set aside for the rest of this run, as a job could not "
                           "start there ({}); its jobs go to the other hosts. Fix it, then "
                           "run runner again",
                           m_fleet.hosts[host].name, reason)};
    m_run_log.record_host_failed(m_fleet.hosts[host].name, why.message());
    m_observer.host_failed(m_fleet.hosts[host], why);
    m_queue_dirty = true;
  }
  if (m_hosts.any_usable() || !m_hosts.any(HostState::set_aside) || m_stopping) return;
  if (!m_reruns.empty())
    report_once(fmt::format(
        "no usable host is left: {} job{} that could not start wait{} for `runner queue "
        "--resume`; the queue file keeps the rest",
        m_reruns.size(), m_reruns.size() == 1 ? "" : "s", m_reruns.size() == 1 ? "s" : ""));
  else if (!m_queue_empty)
    report_once("no usable host is left: the queue file keeps the jobs that did not run");
}

}  // namespace runner
