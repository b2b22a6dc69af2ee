// What every area says about a job's run: its id, its output streams, and
// how it ended.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace runner {

// A job of a campaign; unique within its state directory's journal.
using JobId = std::uint64_t;

// One process of a job on one host, as executors know it; unique within a
// run, and not a JobId: a job runs as new tasks each time it runs again.
using TaskId = std::uint64_t;

enum class OutputStream { out, err };

// How a job (one of its tasks) ended: one of five ends, and whether the
// runner stopped it (its timeout, an interrupt).
struct JobExit {
  // Its process exited with `code`.
  struct Exited {
    int code = 0;
  };
  // A signal ended it ("TERM", "KILL", ...).
  struct Killed {
    std::string signal;
  };
  // Nothing of it ran: its process never started (the login shell failed,
  // the server refused, the spawn failed; `why` says which), or it was
  // stopped (by `signal`) before it started. Not a failure of the job: it
  // can run elsewhere.
  struct NotStarted {
    std::string why;
    std::string signal;
  };
  // Its connection was lost while it ran: the outcome is unknown.
  struct Lost {
    std::string why;
  };
  // It could not run, or its shell failed, for a reason that is its end
  // (`why`; `signal` if one ended that shell).
  struct Failed {
    std::string why;
    std::string signal;
  };

  std::variant<Exited, Killed, NotStarted, Lost, Failed> how = Failed{};
  bool timed_out = false;  // the runner stopped it at its timeout
  bool cancelled = false;  // the runner stopped it on an interrupt

  // The flat view that messages, reports and the journal use.
  int code() const {  // the exit status; -1 when it did not exit
    const Exited* exited = std::get_if<Exited>(&how);
    return exited ? exited->code : -1;
  }
  std::string signal() const {  // "" when no signal ended it
    if (const Killed* killed = std::get_if<Killed>(&how)) return killed->signal;
    if (const NotStarted* early = std::get_if<NotStarted>(&how)) return early->signal;
    if (const Failed* failed = std::get_if<Failed>(&how)) return failed->signal;
    return {};
  }
  std::string error() const {  // why it did not run or end as a process; "" if it did
    if (const NotStarted* early = std::get_if<NotStarted>(&how)) return early->why;
    if (const Lost* lost = std::get_if<Lost>(&how)) return lost->why;
    if (const Failed* failed = std::get_if<Failed>(&how)) return failed->why;
    return {};
  }
  bool lost() const { return std::holds_alternative<Lost>(how); }
  bool not_started() const { return std::holds_alternative<NotStarted>(how); }
  bool succeeded() const { return code() == 0 && !timed_out && !cancelled; }

  static JobExit exited(int code) { return JobExit{Exited{code}}; }
  static JobExit killed(std::string signal) { return JobExit{Killed{std::move(signal)}}; }
  static JobExit not_started_because(std::string why, std::string signal = {}) {
    return JobExit{NotStarted{std::move(why), std::move(signal)}};
  }
  static JobExit lost_because(std::string why) { return JobExit{Lost{std::move(why)}}; }
  static JobExit failed_because(std::string why, std::string signal = {}) {
    return JobExit{Failed{std::move(why), std::move(signal)}};
  }
  // From the flat view (a journal's job_end): the inverse of the accessors
  // above, but that "did not start" is not kept there (it reads as Failed).
  static JobExit from_fields(int code, std::string signal, std::string error, bool lost) {
    if (lost) return lost_because(std::move(error));
    if (!error.empty()) return failed_because(std::move(error), std::move(signal));
    if (!signal.empty()) return killed(std::move(signal));
    return exited(code);
  }
};

}  // namespace runner
