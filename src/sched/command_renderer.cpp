// A job's commands for where it is placed (see command_renderer.h).
#include "runner/sched/command_renderer.h"

#include <fmt/format.h>

#include "runner/config/job_render.h"

namespace runner {

std::optional<std::vector<std::string>> CommandRenderer::render(const JobSpec& job,
                                                                const Placement& placement,
                                                                const NodeLayout* layout) {
  // Before its master port is chosen, a multi-node job's commands are
  // rendered to see that they can be.
  std::optional<NodeLayout> provisional;
  if (job.nodes && !layout) layout = &provisional.emplace(m_gangs.provisional_layout(placement));
  std::vector<std::string> commands;
  for (std::size_t rank = 0; rank < placement.size(); ++rank) {
    const std::vector<int>& slots = placement[rank];
    Result<std::string> command = render_job(
        job, m_fleet, slots, m_services.variables_for(job, layout, static_cast<int>(rank)));
    if (!command) {
      const std::string& host = m_fleet.hosts[m_fleet.slots[slots.front()].host].name;
      m_look.report_once(fmt::format("the next job (queue line {}): {}{}; edit the queue to go on",
                                     job.line, command.status().message(),
                                     command.status().kind() == ErrorKind::undefined
                                         ? " by the job or by host " + host
                                         : std::string()));
      return std::nullopt;
    }
    commands.push_back(std::move(*command));
  }
  return commands;
}

}  // namespace runner
