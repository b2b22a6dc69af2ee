#include "runner/sched/job_end.h"

#include <fmt/format.h>

namespace runner {

JobEnd judge_end(const Job& job, const JobExit& reported, const EndRules& rules) {
  const Running& running = job.running();
  JobEnd end{reported, std::nullopt};
  JobExit& exit = end.exit;
  exit.timed_out = running.timed_out && !running.cancelled;
  exit.cancelled = running.cancelled;

  // Why it goes back to the queue, if it does.
  enum class Back { no, not_started, lost, failed } back = Back::no;
  bool cannot_start = false;  // anywhere: it is not tried again
  if (exit.not_started() && !exit.timed_out && !exit.cancelled) {
    // Each time it cannot start, its host is set aside: more failures than
    // hosts mean it cannot start anywhere.
    if (rules.mode == Mode::queue && job.start_failures < rules.hosts) {
      back = Back::not_started;
    } else if (rules.mode == Mode::queue) {
      cannot_start = true;
      std::get<JobExit::NotStarted>(exit.how).why +=
          fmt::format(" (it could not start {} times; not tried again)", job.start_failures + 1);
    }
  }
  // Broadcast steps run in lockstep on every slot: a step is never redone.
  // A lost job goes back even when the run is stopping, to wait for the
  // next run (`--resume`): its outcome is unknown, so it is no failure.
  if (rules.mode == Mode::queue && back == Back::no && !cannot_start && !exit.succeeded() &&
      !exit.cancelled) {
    int retries = job.spec.retries.value_or(rules.default_retries);
    if (exit.lost() && (rules.allocation_ending || job.requeues < rules.max_requeue))
      back = Back::lost;
    else if (!exit.lost() && job.retries_used < retries && !rules.stopping)
      back = Back::failed;
  }
  if (back == Back::no) return end;

  Job again = job;
  again.tasks.clear();
  Queued queued;
  switch (back) {
    case Back::not_started:  // nothing ran: the same attempt, at the head of the queue
      ++again.start_failures;
      break;
    case Back::lost:  // with its allocation, not counted: no fault of the job's
      ++again.attempt;
      if (!rules.allocation_ending) ++again.requeues;
      break;
    case Back::failed:  // on another slot if one is free
      ++again.attempt;
      ++again.retries_used;
      queued.avoid_slot = job.tasks.front().slots.front();
      break;
    case Back::no:
      break;
  }
  again.state = queued;
  end.again = std::move(again);
  return end;
}

JobExit exit_of_tasks(const Job& job) {
  const Running& running = job.running();
  if (running.failed_rank) return *job.tasks[*running.failed_rank].exit;
  // None failed first: the first that did not succeed (stopped by a
  // timeout or an interrupt), else the first.
  for (const Task& task : job.tasks)
    if (!task.exit->succeeded()) return *task.exit;
  return *job.tasks.front().exit;
}

}  // namespace runner
