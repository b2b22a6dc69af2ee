#include "runner/sched/host_table.h"

namespace runner {

Clock::duration HostTable::reconnect_delay(int tries) {
  auto wait = m_backoff.first;
  for (int i = 0; i < tries && wait < m_backoff.longest; ++i) wait *= 2;
  wait = std::min(wait, m_backoff.longest);
  std::uniform_real_distribution<double> share(0.5, 1.0);
  return std::chrono::duration_cast<Clock::duration>(wait * share(m_random));
}

}  // namespace runner
