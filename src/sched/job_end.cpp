#include "runner/sched/job_end.h"

#include <fmt/format.h>

namespace runner {

JobEnd judge_end(const Job& job, const JobExit& reported, const EndRules& rules) {
  const Running& running = job.running();
  JobEnd end{reported, std::nullopt};
  JobExit& exit = end.exit;
  exit.timed_out = running.timed_out && !running.cancelled;
  exit.cancelled = running.cancelled;

  Job again = job;
  again.tasks.clear();
  again.attempt = job.attempt + 1;
  Queued queued;
  bool rerun = false;
  bool cannot_start = false;  // anywhere: it is not tried again
  if (exit.not_started() && !exit.timed_out && !exit.cancelled) {
    // Each time it cannot start, its host is set aside: more failures than
    // hosts mean it cannot start anywhere.
    if (rules.mode == Mode::queue && job.start_failures < rules.hosts) {
      // Nothing ran: the same attempt, at the head of the queue.
      again.attempt = job.attempt;
      ++again.start_failures;
      rerun = true;
    } else if (rules.mode == Mode::queue) {
      cannot_start = true;
      std::get<JobExit::NotStarted>(exit.how).why +=
          fmt::format(" (it could not start {} times; not tried again)", job.start_failures + 1);
    }
  }
  // Broadcast steps run in lockstep on every slot: a step is never redone.
  if (rules.mode == Mode::queue && !rerun && !cannot_start && !exit.succeeded() &&
      !exit.cancelled && !rules.stopping) {
    int retries = job.spec.retries.value_or(rules.default_retries);
    if (exit.lost() && job.requeues < rules.max_requeue) {
      ++again.requeues;
      rerun = true;
    } else if (!exit.lost() && job.retries_used < retries) {
      ++again.retries_used;
      queued.avoid_slot = job.tasks.front().slots.front();
      rerun = true;
    }
  }
  if (rerun) {
    again.state = queued;
    end.again = std::move(again);
  }
  return end;
}

}  // namespace runner
