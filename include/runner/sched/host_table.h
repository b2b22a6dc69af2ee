// What the scheduler knows of each host of the fleet: where it is in its
// life (connecting, ready, lost and waiting to reconnect, ...), what lost
// jobs left running there, and how long to wait before connecting again.
// Pure bookkeeping: the scheduler decides; this holds and answers.
#pragma once

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runner/config/queue_entry.h"
#include "runner/core/clock.h"
#include "runner/core/job_exit.h"
#include "runner/core/process_group.h"

namespace runner {

// A job that was running when an earlier run of the same queue died: its
// process group may still run on its host (`runner queue --resume`).
struct OrphanJob {
  JobId id = 0;
  JobSpec spec;
  int host = -1;  // index into Fleet::hosts; -1: no longer in hosts.yaml
  ProcessGroup group;  // id 0: never recorded
  int attempt = 1;
  int requeues = 0;
  bool was_running = true;  // false: it had ended and waited to run again
  // A job that spans hosts: the process groups its other ranks left (host
  // index, group), killed with rank 0's before it runs again.
  std::vector<std::pair<int, ProcessGroup>> other_ranks;
};

enum class HostState {
  connecting,    // first connection under way
  ready,         // its free slots take jobs
  cleaning,      // reconnected; killing what lost jobs left running
  reconnecting,  // lost; waiting to connect again
  failed,        // given up
  set_aside,     // jobs could not start there; not used again in this run
};

struct HostRecord {
  HostState state = HostState::connecting;
  bool was_ready = false;  // it has been ready once: a loss is worth a reconnect
  int reconnect_tries = 0;
  std::optional<Clock::time_point> reconnect_at;
  std::vector<ProcessGroup> leftover_groups;  // of lost jobs, to kill when it is back
  std::vector<OrphanJob> orphans;     // --resume jobs to check there
  std::string start_refusal;          // why a job could not start there
  // Something must happen there before its slots take jobs again.
  bool needs_cleaning() const { return !leftover_groups.empty() || !orphans.empty(); }
};

// Exponential backoff with jitter for reconnecting a lost host.
struct Backoff {
  Clock::duration first = std::chrono::seconds(1);
  Clock::duration longest = std::chrono::seconds(60);
};

class HostTable {
 public:
  HostTable(std::size_t hosts, Backoff backoff) : m_hosts(hosts), m_backoff(backoff) {}

  HostRecord& operator[](std::size_t host) { return m_hosts[host]; }
  const HostRecord& operator[](std::size_t host) const { return m_hosts[host]; }
  std::size_t size() const { return m_hosts.size(); }

  bool any(HostState state) const {
    return std::any_of(m_hosts.begin(), m_hosts.end(),
                       [state](const HostRecord& host) { return host.state == state; });
  }
  // `host` may still run jobs in this run, now or after it connects.
  bool usable(std::size_t host) const {
    HostState state = m_hosts[host].state;
    return state != HostState::failed && state != HostState::set_aside;
  }
  // A host that may still run jobs in this run, now or after it connects.
  bool any_usable() const {
    return any(HostState::ready) || any(HostState::connecting) || any(HostState::cleaning) ||
           any(HostState::reconnecting);
  }
  // How long to wait before the next try of a host lost `tries` times
  // before: doubling from the first wait up to the longest, then between
  // half and all of it, so hosts that fell together do not come back in
  // one burst.
  Clock::duration reconnect_delay(int tries);

 private:
  std::vector<HostRecord> m_hosts;
  Backoff m_backoff;
  std::minstd_rand m_random{std::random_device{}()};
};

}  // namespace runner
