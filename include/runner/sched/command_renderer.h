// A job's commands for where it is placed: its command template rendered for
// each rank's slots with the fleet's variables, the services' and, for a job
// that spans hosts, its layout's (before its master port is chosen, a
// provisional layout, to see that they can be rendered). A template that
// cannot be rendered is the queue's problem, said once (QueueLook) until the
// user edits it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/config/queue_entry.h"
#include "runner/sched/gangs.h"
#include "runner/sched/queue_look.h"
#include "runner/sched/services.h"

namespace runner {

class CommandRenderer {
 public:
  CommandRenderer(const Fleet& fleet, const Services& services, const Gangs& gangs, QueueLook& look)
      : m_fleet(fleet), m_services(services), m_gangs(gangs), m_look(look) {}

  // One command per task (rank); nullopt (said once) if a template cannot
  // render. `layout`: a multi-node job's, once its master port is chosen.
  std::optional<std::vector<std::string>> render(const JobSpec& job, const Placement& placement,
                                                 const NodeLayout* layout = nullptr);

 private:
  const Fleet& m_fleet;
  const Services& m_services;
  const Gangs& m_gangs;
  QueueLook& m_look;
};

}  // namespace runner
