// The scheduler's side of jobs that span hosts (`nodes: N`): staging one
// while rank 0's host says which ports are in use, the layout its ranks
// meet by, ending its tasks together, and removing its hostfile after.
// Placement (N hosts at once, or nothing) is Placer::place.
#include <fmt/format.h>
#include <signal.h>

#include <set>

#include "runner/sched/scheduler.h"
#include "runner/ui/exit_text.h"

namespace runner {

void Scheduler::begin(Job job, Placement placement, std::vector<std::string> commands,
                      Clock::time_point now) {
  if (job.spec.nodes)
    stage(std::move(job), std::move(placement));
  else
    launch(std::move(job), std::move(placement), std::move(commands), now);
}

void Scheduler::stage(Job job, Placement placement) {
  JobId id = job.id;
  m_slots.hold(placement, id);
  int master_host = m_fleet.slots[placement.front().front()].host;
  job.state = Staging{std::move(placement)};
  m_staging.emplace(id, std::move(job));
  m_executors[master_host]->survey_network(
      [this, id](const Result<NetworkSurvey>& survey) { staged(id, survey); });
}

void Scheduler::staged(JobId id, const Result<NetworkSurvey>& survey) {
  auto it = m_staging.find(id);
  if (it == m_staging.end()) return;
  Job job = std::move(it->second);
  m_staging.erase(it);
  Placement placement = std::move(std::get<Staging>(job.state).placement);
  m_queue_dirty = true;
  int master_host = m_fleet.slots[placement.front().front()].host;
  if (!survey && survey.status().kind() == ErrorKind::disconnected) {
    // Rank 0's host was lost before it answered: nothing ran; the job goes
    // back to the head of the queue, as it was.
    m_slots.release(placement);
    job.state = Queued{};
    m_reruns.push_front(std::move(job));
    return;
  }
  if (!survey)
    m_observer.warning(fmt::format("#{}: could not read the ports in use on {} ({}); its master "
                                   "port is chosen without them",
                                   id, m_fleet.hosts[master_host].name, survey.status().message()));
  int port = choose_master_port(survey ? survey->ports_in_use : std::set<int>{},
                                master_ports_on(master_host));
  job.layout = layout_for(id, ++m_multi_node_launches, placement, port);
  reach_master_from_elsewhere(*job.layout, survey ? survey->addresses : std::vector<std::string>{});
  auto commands = render(job.spec, placement, &*job.layout);
  if (!commands) {
    // The queue's check rendered them already; only a master port can
    // differ, so this does not happen: end it rather than hold its slots.
    m_slots.release(placement);
    m_observer.warning(fmt::format("#{} could not be rendered with its master port", id));
    return;
  }
  Clock::time_point now = m_options.clock();
  launch(std::move(job), std::move(placement), std::move(*commands), now);
  if (m_cancelling) {
    // Interrupted twice while it was staged: recorded, and ended unstarted.
    Job& launched = m_running.at(id);
    launched.running().cancelled = true;
    std::erase(m_launched, id);
    for (Task& task : launched.tasks) task.exit = JobExit::not_started_because("the run was stopped");
    end_job(id, JobExit::not_started_because("the run was stopped"));
  }
}

NodeLayout Scheduler::layout_for(JobId id, std::uint64_t launch, const Placement& placement,
                                 int port) const {
  NodeLayout layout;
  layout.ranks = placement;
  for (const auto& slots : placement) {
    int host = m_fleet.slots[slots.front()].host;
    layout.addresses.push_back(node_address(m_fleet, slots, m_executors[host]->address()));
  }
  layout.master_port = port;
  layout.hostfile = fmt::format("/tmp/runner-{}-{}-{}.hostfile", m_options.run_id, id, launch);
  return layout;
}

void Scheduler::remove_hostfile(const Job& job) {
  if (!job.layout) return;
  // Where a rank ran (a lost one's host is gone, or will be cleaned).
  std::set<int> hosts;
  for (const Task& task : job.tasks)
    if (task.ended_on_its_host()) hosts.insert(task.host);
  for (int host : hosts) {
    ++m_after_commands;
    m_executors[host]->remove_files(
        {job.layout->hostfile},
        [this, id = job.id](const JobExit& exit, const std::string& output) {
          --m_after_commands;
          if (!exit.succeeded() && !exit.lost())
            m_observer.warning(fmt::format("#{}: its hostfile could not be removed: {}", id,
                                           output.empty() ? exit.error() : output));
        });
  }
}

void Scheduler::reach_master_from_elsewhere(NodeLayout& layout,
                                            const std::vector<std::string>& master_addresses) {
  std::string& master = layout.addresses.front();
  bool elsewhere = std::any_of(layout.addresses.begin() + 1, layout.addresses.end(),
                               [](const std::string& a) { return !is_loopback(a); });
  if (!is_loopback(master) || !elsewhere) return;
  if (master_addresses.empty()) {
    m_observer.warning(fmt::format(
        "rank 0's host is reached as {}, which the other nodes cannot use, and it has no other "
        "address; give it `addr:` in the hosts file",
        master));
    return;
  }
  master = master_addresses.front();
}

std::set<int> Scheduler::master_ports_on(int host) const {
  std::set<int> given;
  for (const auto& [id, job] : m_running)
    if (job.layout && job.tasks.front().host == host) given.insert(job.layout->master_port);
  return given;
}

void Scheduler::task_ended(Job& job, Task& task, const JobExit& exit) {
  task.exit = exit;
  Running& running = job.running();
  if (job.tasks.size() > 1 && !exit.succeeded() && !running.failed_rank && !running.kill_at) {
    // Fail together: the others would wait for this rank forever.
    running.failed_rank = task.rank;
    m_observer.warning(fmt::format("#{} rank {} [{}] {}; stopping its other ranks", job.id,
                                   task.rank, task.label, describe_exit(exit)));
    stop_job(job, m_options.clock());
  }
  for (const Task& each : job.tasks)
    if (!each.exit) return;
  end_job(job.id, exit_of_tasks(job));
}

}  // namespace runner
