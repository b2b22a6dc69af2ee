// Broadcast mode's steps: one job of the queue at a time on every slot of
// every ready host, the next once all of it has ended; a step with `push:`
// waits until its files reached every host it was sent to, and runs only
// where they did. This holds the current step's state (whether a job of it
// failed, the push under way) and does the push: it reads the local files,
// sends them to the ready hosts, says what each host answered, and hands
// the step back once all answered. The scheduler takes and launches.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/queue_entry.h"
#include "runner/exec/host_ops.h"
#include "runner/sched/host_table.h"
#include "runner/sched/run_observer.h"

namespace runner {

// A step: its job, and its command on each slot (slot, command).
struct BroadcastStep {
  JobSpec spec;
  std::vector<std::pair<int, std::string>> commands;
};

class BroadcastSteps {
 public:
  // A step whose push ended: its commands left only on the slots of the
  // hosts that got the files and are still ready (none if the files could
  // not be read), and how many failures of the step the push was (a host
  // without the files, or the files that could not be read, each one).
  struct Pushed {
    BroadcastStep step;
    int failures = 0;
  };

  // `host_ops`: each host's operations, by host index. `pushed`: a step's
  // push ended (at once, inside push(), if its files cannot be read).
  BroadcastSteps(const Fleet& fleet, const HostTable& hosts,
                 const std::vector<std::unique_ptr<HostOps>>& host_ops, RunObserver& observer,
                 std::function<void(Pushed)> pushed);

  // A new step begins: none of its jobs has failed yet.
  void begin() { m_failed = false; }
  // A job of the current step failed: unless errors are ignored, the run
  // stops after it.
  void job_failed() { m_failed = true; }
  bool failed() const { return m_failed; }

  // Sends `step`'s `push:` files to every ready host (there is one at
  // least) into its `push_to:` folder; its commands wait.
  void push(BroadcastStep step);
  // A step's files are on their way: the next step waits.
  bool pushing() const { return m_pushing.has_value(); }
  // Stops the copies under way (each ends as failed).
  void stop_pushing();

 private:
  void host_answered(int host, const PutResult& result);

  struct Pushing {
    BroadcastStep step;
    int pending = 0;       // hosts yet to answer
    std::set<int> failed;  // hosts without the files
  };

  const Fleet& m_fleet;
  const HostTable& m_hosts;
  const std::vector<std::unique_ptr<HostOps>>& m_host_ops;
  RunObserver& m_observer;
  std::function<void(Pushed)> m_pushed;
  bool m_failed = false;
  std::optional<Pushing> m_pushing;
};

}  // namespace runner
