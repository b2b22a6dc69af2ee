// Broadcast mode's steps: one job of the queue at a time on every slot of
// every ready host, the next once all of it has ended; a step with `push:`
// waits until its files reached every host it was sent to, and runs only
// where they did. This holds the current step's state (whether a job of it
// failed, the push under way); the scheduler takes, pushes and launches.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/queue_entry.h"

namespace runner {

// A step: its job, and its command on each slot (slot, command).
struct BroadcastStep {
  JobSpec spec;
  std::vector<std::pair<int, std::string>> commands;
};

class BroadcastSteps {
 public:
  explicit BroadcastSteps(const Fleet& fleet) : m_fleet(fleet) {}

  // A new step begins: none of its jobs has failed yet.
  void begin() { m_failed = false; }
  // A job of the current step failed: unless errors are ignored, the run
  // stops after it.
  void job_failed() { m_failed = true; }
  bool failed() const { return m_failed; }

  // `step`'s files are on their way to `hosts` hosts; its commands wait.
  void push(BroadcastStep step, int hosts);
  // A step's files are on their way: the next step waits.
  bool pushing() const { return m_pushing.has_value(); }
  // Once every host answered, the step whose push `host`'s answer ended
  // (`got_files`: it has them), its commands left only on the slots of the
  // hosts that have them, and how many hosts did not get them (each a
  // failure of the step); nullopt while hosts have yet to answer.
  struct Pushed {
    BroadcastStep step;
    int hosts_without_files = 0;
  };
  std::optional<Pushed> pushed(int host, bool got_files);

 private:
  struct Pushing {
    BroadcastStep step;
    int pending = 0;       // hosts yet to answer
    std::set<int> failed;  // hosts without the files
  };

  const Fleet& m_fleet;
  bool m_failed = false;
  std::optional<Pushing> m_pushing;
};

}  // namespace runner
