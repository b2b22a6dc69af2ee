// SIGINT, SIGTERM and SIGHUP delivered as events of the loop (signalfd)
// rather than asynchronous handlers. Blocks those signals for the process
// while it exists; children get them unblocked again.
#pragma once

#include <signal.h>

#include <functional>

#include "runner/core/pollable.h"

namespace runner {

class SignalWatcher final : public Pollable {
 public:
  // `on_signal` gets the signal number each time one arrives.
  explicit SignalWatcher(std::function<void(int)> on_signal);
  ~SignalWatcher() override;
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  void poll_fds(std::vector<pollfd>& out) override;
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

 private:
  int m_fd = -1;
  sigset_t m_previous;
  std::function<void(int)> m_on_signal;
};

}  // namespace runner
