// The one clock of a run. Time is read once per event-loop round and handed
// down (step(now)); code that needs "now" elsewhere is given a function that
// returns it, so tests can drive time.
#pragma once

#include <chrono>
#include <functional>

namespace runner {

using Clock = std::chrono::steady_clock;

// Where a component that is not stepped reads the time.
using ClockSource = std::function<Clock::time_point()>;

inline ClockSource steady_clock_source() {
  return [] { return Clock::now(); };
}

}  // namespace runner
