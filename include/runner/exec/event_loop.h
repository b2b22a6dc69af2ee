// The one event loop: polls every Pollable's descriptors, then steps every
// Pollable in the order they were added. No threads.
#pragma once

#include <optional>
#include <vector>

#include "runner/core/pollable.h"
#include "runner/core/status.h"

namespace runner {

class EventLoop {
 public:
  // `pollable` must outlive its membership. Order of add() is step order.
  void add(Pollable* pollable);
  void remove(Pollable* pollable);

  // Waits until a descriptor is ready, the earliest deadline passes or
  // `max_wait` elapses, then steps every pollable once. An error, stepping
  // none, when the descriptors cannot be polled.
  Status run_once(std::optional<Clock::duration> max_wait = std::nullopt);

 private:
  std::vector<Pollable*> m_pollables;
  std::vector<pollfd> m_fds;  // reused across calls
};

}  // namespace runner
