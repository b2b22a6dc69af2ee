// How long the jobs that succeeded took, to tell whether another would end
// before the allocation does (SchedulerOptions::take_until): one more fits
// while now plus their mean duration is before it (before any succeeded:
// while time is left).
#pragma once

#include <optional>

#include "runner/core/clock.h"

namespace runner {

class JobPace {
 public:
  explicit JobPace(std::optional<Clock::time_point> take_until) : m_take_until(take_until) {}

  void succeeded(Clock::duration took) {
    m_total += took;
    ++m_succeeded;
  }
  int succeeded() const { return m_succeeded; }
  // Whether a job taken at `now` would end after take_until.
  bool out_of_time(Clock::time_point now) const {
    if (!m_take_until) return false;
    if (m_succeeded == 0) return now >= *m_take_until;
    return now + m_total / m_succeeded > *m_take_until;
  }

 private:
  std::optional<Clock::time_point> m_take_until;
  Clock::duration m_total{};
  int m_succeeded = 0;
};

}  // namespace runner
