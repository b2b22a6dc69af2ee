// What every area says about a job's run: its id, its output streams, and
// how it ended.
#pragma once

#include <cstdint>
#include <string>

namespace runner {

// A job of a campaign; unique within its state directory's journal.
using JobId = std::uint64_t;

// One process of a job on one host, as executors know it; unique within a
// run, and not a JobId: a job runs as new tasks each time it runs again.
using TaskId = std::uint64_t;

enum class OutputStream { out, err };

// How a job ended.
struct JobExit {
  int code = -1;       // exit status when the process exited
  std::string signal;  // "TERM", "KILL", ... when a signal ended it
  std::string error;   // non-empty: it could not be started, or its
                       // connection was lost (then `lost` is true)
  bool lost = false;   // the connection dropped while it ran: outcome unknown
  // Nothing of the job ran: its process never started (the login shell
  // failed, the server refused, the spawn failed; `error` says why). Such a
  // job is not failed: it can run elsewhere.
  bool not_started = false;
  bool timed_out = false;  // the runner stopped it at its timeout
  bool cancelled = false;  // the runner stopped it on an interrupt
  bool succeeded() const {
    return error.empty() && signal.empty() && code == 0 && !timed_out && !cancelled;
  }
};

}  // namespace runner
