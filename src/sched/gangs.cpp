#include "runner/sched/gangs.h"

#include <fmt/format.h>

#include <algorithm>

namespace runner {

int Gangs::stage(Job job, Placement placement) {
  int master_host = m_fleet.slots[placement.front().front()].host;
  JobId id = job.id;
  job.state = Staging{std::move(placement)};
  m_staging.emplace(id, std::move(job));
  return master_host;
}

std::optional<std::variant<GangReady, GangHostLost>> Gangs::staged(
    JobId id, const Result<NetworkSurvey>& survey) {
  auto it = m_staging.find(id);
  if (it == m_staging.end()) return std::nullopt;
  Job job = std::move(it->second);
  m_staging.erase(it);
  Placement placement = std::move(std::get<Staging>(job.state).placement);
  if (!survey && survey.status().kind() == ErrorKind::disconnected) {
    job.state = Queued{};
    return GangHostLost{std::move(job), std::move(placement)};
  }
  GangReady ready;
  int master_host = m_fleet.slots[placement.front().front()].host;
  if (!survey)
    ready.warnings.push_back(fmt::format(
        "#{}: could not read the ports in use on {} ({}); its master port is chosen without them",
        id, m_fleet.hosts[master_host].name, survey.status().message()));
  int port = choose_master_port(survey ? survey->ports_in_use : std::set<int>{},
                                master_ports_on(master_host));
  m_master_ports[id] = {master_host, port};
  job.layout = layout_for(id, ++m_launches, placement, port);
  if (auto warning = reach_master_from_elsewhere(
          *job.layout, survey ? survey->addresses : std::vector<std::string>{}))
    ready.warnings.push_back(std::move(*warning));
  ready.job = std::move(job);
  ready.placement = std::move(placement);
  return ready;
}

NodeLayout Gangs::provisional_layout(const Placement& placement) const {
  return layout_for(0, 0, placement, 0);
}

HostfileRemoval Gangs::ended(const Job& job) {
  m_master_ports.erase(job.id);
  HostfileRemoval removal{job.id};
  if (!job.layout) return removal;
  removal.path = job.layout->hostfile;
  for (const Task& task : job.tasks)
    if (task.ended_on_its_host()) removal.hosts.insert(task.host);
  return removal;
}

NodeLayout Gangs::layout_for(JobId id, std::uint64_t launch, const Placement& placement,
                             int port) const {
  NodeLayout layout;
  layout.ranks = placement;
  for (const auto& slots : placement) {
    int host = m_fleet.slots[slots.front()].host;
    layout.addresses.push_back(node_address(m_fleet, slots, m_executors[host]->address()));
  }
  layout.master_port = port;
  layout.hostfile = fmt::format("/tmp/runner-{}-{}-{}.hostfile", m_run_id, id, launch);
  return layout;
}

std::optional<std::string> Gangs::reach_master_from_elsewhere(
    NodeLayout& layout, const std::vector<std::string>& master_addresses) {
  std::string& master = layout.addresses.front();
  bool elsewhere = std::any_of(layout.addresses.begin() + 1, layout.addresses.end(),
                               [](const std::string& a) { return !is_loopback(a); });
  if (!is_loopback(master) || !elsewhere) return std::nullopt;
  if (master_addresses.empty())
    return fmt::format(
        "rank 0's host is reached as {}, which the other nodes cannot use, and it has no other "
        "address; give it `addr:` in the hosts file",
        master);
  master = master_addresses.front();
  return std::nullopt;
}

std::set<int> Gangs::master_ports_on(int host) const {
  std::set<int> given;
  for (const auto& [id, given_on] : m_master_ports)
    if (given_on.first == host) given.insert(given_on.second);
  return given;
}

}  // namespace runner
