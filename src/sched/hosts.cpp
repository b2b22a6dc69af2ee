#include "runner/sched/hosts.h"

#include <fmt/format.h>

namespace runner {

namespace {

bool permanent(const Status& error) {
  return error.kind() == ErrorKind::auth || error.kind() == ErrorKind::host_key;
}

}  // namespace

Hosts::Hosts(Backend& backend, ExecutorEvents& events, const SchedulerOptions& options,
             RunLog& run_log, RunObserver& observer, Callbacks callbacks)
    : m_fleet(backend.fleet()),
      m_executors(backend.executors(events)),
      m_options(options),
      m_run_log(run_log),
      m_observer(observer),
      m_callbacks(std::move(callbacks)),
      m_table(m_fleet.hosts.size(), Backoff{options.reconnect_first, options.reconnect_longest}) {
  for (const auto& executor : m_executors) m_ops.push_back(backend.host_ops(*executor));
}

void Hosts::connect_all() {
  for (auto& executor : m_executors) executor->connect();
}

void Hosts::adopt_orphans(std::vector<OrphanJob> orphans) {
  for (OrphanJob& orphan : orphans) {
    // A job that spans hosts is run again once, for rank 0; what its other
    // ranks left is killed as a lost job's leftovers.
    for (auto& [host, group] : std::exchange(orphan.other_ranks, {}))
      if (!m_options.keep_orphans) m_table[host].leftover_groups.push_back(std::move(group));
    if (orphan.host >= 0 && orphan.group.id > 0) {
      m_table[orphan.host].orphans.push_back(std::move(orphan));
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
    m_callbacks.rerun(std::move(orphan));
  }
}

void Hosts::ready(int host) {
  HostRecord& record = m_table[host];
  record.was_ready = true;
  record.reconnect_tries = 0;
  if (record.needs_cleaning()) {
    record.state = HostState::cleaning;
    clean(host);
    return;
  }
  record.state = HostState::ready;
  m_observer.host_ready(m_fleet.hosts[host]);
  m_callbacks.changed();
}

HostLoss Hosts::failed(int host, const Status& error, bool stopping) {
  if (error.kind() == ErrorKind::ended) {
    if (m_allocation_ending) return HostLoss::ignored;
    m_allocation_ending = true;
    // Nothing is sent to them again, not even a cleanup: the allocation's
    // end kills what runs there.
    for (std::size_t h = 0; h < m_table.size(); ++h) m_table[h].state = HostState::failed;
    m_observer.warning(fmt::format(
        "{}: no more jobs start; the jobs it ends run again in the next run (runner queue "
        "--resume), and the queue file keeps the rest",
        error.message()));
    return HostLoss::allocation_ending;
  }
  HostRecord& record = m_table[host];
  if (record.state == HostState::set_aside) return HostLoss::ignored;  // said once; stays aside
  m_run_log.record_host_failed(m_fleet.hosts[host].name, error.message());
  m_callbacks.changed();
  bool retry = record.was_ready && !permanent(error) && !stopping &&
               (m_options.daemon || record.reconnect_tries < m_options.reconnect_tries);
  if (retry) {
    Clock::duration wait = m_table.reconnect_delay(record.reconnect_tries++);
    record.state = HostState::reconnecting;
    record.reconnect_at = m_options.clock() + wait;
    m_observer.host_reconnecting(m_fleet.hosts[host], error, wait);
    return HostLoss::reconnecting;
  }
  m_observer.host_failed(m_fleet.hosts[host], error);
  record.state = HostState::failed;
  requeue_orphans(host, "its host could not be reached to check on it");
  return HostLoss::given_up;
}

void Hosts::job_lost(int host, const ProcessGroup& group) {
  if (!m_options.keep_orphans) m_table[host].leftover_groups.push_back(group);
}

void Hosts::job_refused(int host, const std::string& reason) {
  if (m_table[host].start_refusal.empty()) m_table[host].start_refusal = reason;
}

void Hosts::reconnect_due(Clock::time_point now) {
  for (std::size_t h = 0; h < m_table.size(); ++h) {
    if (m_table[h].reconnect_at && now >= *m_table[h].reconnect_at) {
      m_table[h].reconnect_at.reset();
      m_table[h].state = HostState::connecting;
      m_executors[h]->connect();
    }
  }
}

std::optional<Clock::time_point> Hosts::next_reconnect() const {
  std::optional<Clock::time_point> next;
  for (std::size_t h = 0; h < m_table.size(); ++h)
    if (const auto& at = m_table[h].reconnect_at; at && (!next || *at < *next)) next = at;
  return next;
}

void Hosts::clean_live_hosts() {
  // A job lost alone (its channel broke, the host did not) may still run
  // there while it is rerun elsewhere: kill its group now. Lost with their
  // host, groups wait for the host to come back (ready()).
  for (std::size_t host = 0; host < m_table.size(); ++host) {
    if (m_table[host].state != HostState::ready || m_table[host].leftover_groups.empty()) continue;
    m_table[host].state = HostState::cleaning;
    clean(static_cast<int>(host));
  }
}

void Hosts::clean(int host) {
  // The losses are on disk before their leftovers are killed; if the journal
  // cannot be written, the observer has been told so, and the kill goes
  // ahead.
  static_cast<void>(m_run_log.sync());
  std::vector<ProcessGroup> groups = std::exchange(m_table[host].leftover_groups, {});
  std::vector<OrphanJob> orphans = std::exchange(m_table[host].orphans, {});
  for (const OrphanJob& orphan : orphans) groups.push_back(orphan.group);
  const std::string& name = m_fleet.hosts[host].name;
  m_ops[host]->kill_leftovers(
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
        for (OrphanJob& orphan : orphans) m_callbacks.rerun(std::move(orphan));
        if (check.lost) return;  // failed() has decided what comes next
        m_table[host].state = HostState::ready;
        m_observer.host_ready(m_fleet.hosts[host]);
        m_callbacks.changed();
      });
}

void Hosts::requeue_orphans(int host, const std::string& why) {
  for (OrphanJob& orphan : std::exchange(m_table[host].orphans, {})) {
    m_observer.warning(fmt::format("job #{} (process group {} on {}): {}", orphan.id,
                                   orphan.group.id, m_fleet.hosts[host].name, why));
    m_callbacks.rerun(std::move(orphan));
  }
}

void Hosts::set_aside_refusing_hosts() {
  for (std::size_t host = 0; host < m_table.size(); ++host) {
    std::string reason = std::exchange(m_table[host].start_refusal, {});
    // A host that failed meanwhile is reconnected or given up as usual.
    if (reason.empty() || m_table[host].state != HostState::ready) continue;
    m_table[host].state = HostState::set_aside;
    Status why{ErrorKind::protocol,
               fmt::format("{}: set aside for the rest of this run, as a job could not "
                           "start there ({}); its jobs go to the other hosts. Fix it, then "
                           "run runner again",
                           m_fleet.hosts[host].name, reason)};
    m_run_log.record_host_failed(m_fleet.hosts[host].name, why.message());
    m_observer.host_failed(m_fleet.hosts[host], why);
    m_callbacks.changed();
  }
}

}  // namespace runner
