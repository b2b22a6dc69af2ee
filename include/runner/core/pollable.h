// The shape of everything the event loop drives: descriptors to wait on, a
// non-blocking step, and the latest time it must be stepped again.
#pragma once

#include <poll.h>

#include <optional>
#include <vector>

#include "runner/core/clock.h"

namespace runner {

// Something the event loop polls.
class Pollable {
 public:
  virtual ~Pollable() = default;
  // Appends the descriptors to wait on, with the events wanted.
  virtual void poll_fds(std::vector<pollfd>& out) = 0;
  // Makes all the progress possible without blocking. Called after every
  // wake-up of the loop, whether or not one of its fds was ready.
  virtual void step(Clock::time_point now) = 0;
  // The latest time step() must run again even if no fd becomes ready.
  virtual std::optional<Clock::time_point> deadline() const = 0;
};

}  // namespace runner
