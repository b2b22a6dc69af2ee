// SIGINT, SIGTERM and SIGHUP delivered as events of the loop (signalfd)
// rather than asynchronous handlers. Blocks those signals for the process
// while it exists; children get them unblocked again.
#pragma once

#include <signal.h>

#include <functional>
#include <memory>

#include "runner/core/file_system.h"
#include "runner/core/pollable.h"
#include "runner/core/result.h"

namespace runner {

class SignalWatcher final : public Pollable {
 public:
  // Blocks the signals and watches them, or says why it cannot (no
  // descriptor left), leaving them as they were. `on_signal` gets the
  // signal number each time one arrives.
  static Result<std::unique_ptr<SignalWatcher>> open(std::function<void(int)> on_signal);
  ~SignalWatcher() override;
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  void poll_fds(std::vector<pollfd>& out) override;
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

 private:
  SignalWatcher(FileDescriptor signals, const sigset_t& previous,
                std::function<void(int)> on_signal);

  FileDescriptor m_signals;
  sigset_t m_previous;
  std::function<void(int)> m_on_signal;
};

}  // namespace runner
