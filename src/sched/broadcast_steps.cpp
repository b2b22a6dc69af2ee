// Broadcast mode's steps (see broadcast_steps.h).
#include "runner/sched/broadcast_steps.h"

namespace runner {

void BroadcastSteps::push(BroadcastStep step, int hosts) {
  m_pushing = Pushing{std::move(step), hosts, {}};
}

std::optional<BroadcastSteps::Pushed> BroadcastSteps::pushed(int host, bool got_files) {
  if (!got_files) m_pushing->failed.insert(host);
  if (--m_pushing->pending > 0) return std::nullopt;
  Pushing done = std::move(*m_pushing);
  m_pushing.reset();
  if (!done.failed.empty()) m_failed = true;
  std::erase_if(done.step.commands, [&](const auto& slot_command) {
    return done.failed.count(m_fleet.slots[slot_command.first].host) > 0;
  });
  return Pushed{std::move(done.step), static_cast<int>(done.failed.size())};
}

}  // namespace runner
