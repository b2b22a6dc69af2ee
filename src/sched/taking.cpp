// Taking jobs, in both modes. Queue mode: the jobs to run again first (and
// those taken ahead of need from a long queue), then the queue file's, each
// placed and rendered as it is taken, while slots are free, no service is
// starting and (in an allocation) there is time left for another job
// (QueueLook keeps what each look found). Broadcast mode: one job of the
// queue at a time, run on every slot of every ready host, the next once all
// of it has ended (BroadcastSteps holds the step); a step's `push:` copies
// its files to every ready host (as `runner push` does; BroadcastSteps does
// it) before its command starts on the slots of the hosts that got them (a
// host that did not is a failure of the step).
#include <fmt/format.h>

#include "runner/core/debug_log.h"
#include "runner/sched/job_records.h"
#include "runner/sched/scheduler.h"

namespace runner {

Placer Scheduler::placer() const {
  return Placer(m_fleet, m_hosts.table(), m_slots, m_gpu_gates, m_services, m_now);
}

bool Scheduler::can_take_now() const {
  if (m_outcome.stopping() || m_services.tearing_down() || m_unrecorded || !m_look.due())
    return false;
  // The jobs after a service wait until it is ready.
  if (m_services.starting()) return false;
  // Broadcast mode: the next step waits for the last and for every host.
  if (m_options.mode == Mode::broadcast)
    return !m_steps.pushing() && !m_hosts.table().any(HostState::connecting) &&
           !m_hosts.table().any(HostState::cleaning) && only_services_left();
  if (placer().any_slot_open()) return true;
  // No slot is free, and if services alone hold them none will be: the
  // queue's head is looked at, to say that it cannot run.
  return m_services.any() && only_services_left();
}

bool Scheduler::pump_reruns(Clock::time_point now) {
  while (!m_reruns.empty()) {
    const Job& rerun = m_reruns.next();
    if (rerun.pinned_host >= 0 && !m_hosts.table().usable(rerun.pinned_host)) {
      m_observer.warning(
          fmt::format("#{} runs on each host, and {} is no longer used; it does "
                      "not run there again",
                      rerun.id, m_fleet.hosts[rerun.pinned_host].name));
      m_outcome.failed();
      m_reruns.take_next();
      continue;
    }
    auto placement =
        placer().place(rerun.spec, std::get<Queued>(rerun.state).avoid_slot, rerun.pinned_host);
    if (!placement) return false;
    auto commands = m_render.render(rerun.spec, *placement);
    if (!commands) return false;
    begin(m_reruns.take_next(), std::move(*placement), std::move(*commands), now);
    if (m_services.starting()) return false;  // what comes after waits for it
  }
  return true;
}

void Scheduler::pump_queue(Clock::time_point now) {
  m_look.begin();
  bool reruns_wait = !m_reruns.empty() && m_pace.out_of_time(now);
  if (!reruns_wait && !pump_reruns(now)) return;  // FIFO: the queue file waits behind them
  // Jobs the queue lets us take, each with the slots reserved for it: one
  // copy, or (`every: host`) a copy on each host.
  struct Copy {
    Placement placement;
    std::vector<std::string> commands;
  };
  std::vector<std::vector<Copy>> placements;
  bool rendered_ok = true;
  bool service_taken = false;  // what comes after it waits until it is ready
  bool no_time = false;        // the allocation ends before another job would
  int largest_placed = 0;      // the most slots of one host a job taken needs
  // Of a long queue, jobs after those placed, which surely fit where one of
  // them did: the rewrite of the file is paid by them too. Not in an
  // allocation, whose end would leave them to the next one.
  auto can_take_ahead = [&](const JobSpec& job) {
    return !service_taken && !no_time && rendered_ok && !m_options.take_until && !job.nodes &&
           job.slots <= largest_placed;
  };
  TakeBatch batch = m_source.take_while([&](const JobSpec& job) {
    if (service_taken) return false;
    if (!job.push.empty()) {
      // Said once it is the head, when what this batch took cannot clear it.
      if (!placements.empty()) return false;
      m_look.report_once(
          fmt::format("the next job (queue line {}) has `push:`, which only a step of "
                      "`runner broadcast` takes (or use `runner push`); edit the queue to "
                      "go on",
                      job.line));
      rendered_ok = false;  // said: nothing else to say of it
      return false;
    }
    if (m_pace.out_of_time(now)) {
      no_time = true;
      return false;
    }
    std::vector<Placement> where;
    if (job.every_host) {
      auto copies = placer().place_on_every_host(job);
      if (!copies) return false;
      where = std::move(*copies);
    } else if (auto placement = placer().place(job)) {
      where.push_back(std::move(*placement));
    } else {
      return false;
    }
    std::vector<Copy> copies;
    for (Placement& placement : where) {
      auto commands = m_render.render(job, placement);
      rendered_ok = commands.has_value();
      if (!rendered_ok) return false;
      copies.push_back({std::move(placement), std::move(*commands)});
    }
    for (const Copy& copy : copies) m_slots.reserve(copy.placement);
    placements.push_back(std::move(copies));
    service_taken = job.service.has_value();
    if (!job.every_host && !job.nodes) largest_placed = std::max(largest_placed, job.slots);
    return true;
  }, can_take_ahead);
  for (std::size_t i = batch.taken.size(); i < placements.size(); ++i)
    for (const Copy& copy : placements[i]) m_slots.release(copy.placement);  // not taken after all
  if (!batch.taken.empty()) m_look.took();
  for (std::size_t i = 0; i < batch.taken.size(); ++i)
    for (Copy& copy : placements[i]) {
      Job job = new_job(batch.taken[i]);
      if (job.spec.every_host) job.pinned_host = m_fleet.slots[copy.placement.front().front()].host;
      begin(std::move(job), std::move(copy.placement), std::move(copy.commands), now);
    }
  // They start before anything left in the file, once the journal holds
  // them (the checkpoint of this step).
  for (const JobSpec& spec : batch.taken_ahead) {
    Job job = new_job(spec);
    m_run_log.record_taken_ahead(job_taken_ahead_record(job));
    m_reruns.add_taken_ahead(std::move(job));
  }

  if (no_time || reruns_wait) {
    m_look.left_jobs();
    auto left = std::chrono::duration_cast<std::chrono::seconds>(*m_options.take_until - now);
    m_observer.notice(fmt::format(
        "the allocation ends in {}s, sooner than another job would end ({} succeeded so far); "
        "no more jobs start, and the queue keeps the rest for the next allocation (--resume)",
        std::max<long long>(0, left.count()), m_pace.succeeded()));
    m_outcome.stop();
    return;
  }
  // The jobs after a service taken wait until it is ready, not for slots.
  if (auto* head = std::get_if<HeadNotPlaceable>(&batch.stopped); head && !service_taken) {
    m_look.left_jobs();
    // Services keep their slots until the run ends.
    bool nothing_will_free = only_services_left() && !m_hosts.table().any(HostState::connecting) &&
                             !m_hosts.table().any(HostState::cleaning) &&
                             !m_hosts.table().any(HostState::reconnecting) && !placer().gates_waiting();
    if (rendered_ok && debug_log::wanted(debug_log::Level::detail))
      m_look.head_waits(placer().why_head_waits(head->job));
    if (!rendered_ok || nothing_will_free) {
      // Nothing will change until the user edits the queue.
      if (rendered_ok) m_look.report_once(placer().why_not_placeable(head->job));
      if (!m_options.daemon) m_outcome.mark_unrunnable();
    }
    return;
  }
  m_look.stopped(batch, now);
}

void Scheduler::pump_broadcast(Clock::time_point now) {
  m_look.begin();
  if (m_steps.failed() && !m_options.ignore_errors) {
    m_observer.notice("a job failed; stopping (use --ignore-errors to go on)");
    m_outcome.stop();
    return;
  }
  if (!m_hosts.table().any(HostState::ready)) return;
  m_steps.begin();
  // One job per step: it runs on every slot of every ready host.
  std::vector<std::pair<int, std::string>> commands;
  TakeBatch batch = m_source.take_while([&](const JobSpec& job) {
    if (!commands.empty()) return false;
    if (job.nodes || job.every_host) {
      m_look.report_once(fmt::format("the next job (queue line {}) has `{}`, but broadcast "
                                     "runs every job on each slot alone; edit the queue to go on",
                                     job.line, job.nodes ? "nodes:" : "every: host"));
      return false;
    }
    for (std::size_t s = 0; s < m_fleet.slots.size(); ++s) {
      if (m_hosts.table()[m_fleet.slots[s].host].state != HostState::ready) continue;
      auto command = m_render.render(job, {{static_cast<int>(s)}});
      if (!command) {
        commands.clear();
        return false;
      }
      commands.emplace_back(static_cast<int>(s), std::move(command->front()));
    }
    return true;
  });
  if (!batch.taken.empty()) {
    m_look.took();
    BroadcastStep step{batch.taken.front(), std::move(commands)};
    if (!step.spec.push.empty())
      m_steps.push(std::move(step));
    else
      launch_step(std::move(step), now);
    return;
  }
  if (std::holds_alternative<HeadNotPlaceable>(batch.stopped)) {
    if (!m_options.daemon) m_outcome.mark_unrunnable();
    return;
  }
  m_look.stopped(batch, now);
}

void Scheduler::launch_step(BroadcastStep step, Clock::time_point now) {
  // A step of `push:` alone runs nothing.
  if (step.spec.command.empty()) return;
  for (auto& [slot, command] : step.commands)
    launch(new_job(step.spec), {{slot}}, {std::move(command)}, now);
}

void Scheduler::step_pushed(BroadcastSteps::Pushed pushed) {
  m_look.changed();
  m_outcome.failed(pushed.failures);
  // Interrupted meanwhile: the command does not start.
  if (!m_outcome.stopping()) launch_step(std::move(pushed.step), m_options.clock());
}
Job Scheduler::new_job(const JobSpec& spec) {
  Job job;
  job.id = m_next_job_id();
  job.spec = spec;
  return job;
}


}  // namespace runner
