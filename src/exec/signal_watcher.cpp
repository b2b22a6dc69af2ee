// SignalWatcher: SIGINT, SIGTERM and SIGHUP blocked and read from a
// signalfd (see signal_watcher.h).
#include "runner/exec/signal_watcher.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace runner {

Result<std::unique_ptr<SignalWatcher>> SignalWatcher::open(std::function<void(int)> on_signal) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigset_t previous;
  sigprocmask(SIG_BLOCK, &set, &previous);
  FileDescriptor signals(signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
  if (!signals.valid()) {
    int error = errno;
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    return Status::error(
        std::string("cannot watch for interrupts: signalfd: ") + std::strerror(error) +
        (error == EMFILE || error == ENFILE
             ? " (no file descriptor is left: raise the limit, e.g. `ulimit -n 4096`)"
             : ""));
  }
  return std::unique_ptr<SignalWatcher>(
      new SignalWatcher(std::move(signals), previous, std::move(on_signal)));
}

SignalWatcher::SignalWatcher(FileDescriptor signals, const sigset_t& previous,
                             std::function<void(int)> on_signal)
    : m_signals(std::move(signals)), m_previous(previous), m_on_signal(std::move(on_signal)) {}

SignalWatcher::~SignalWatcher() {
  static_cast<void>(m_signals.close());
  sigprocmask(SIG_SETMASK, &m_previous, nullptr);
}

void SignalWatcher::poll_fds(std::vector<pollfd>& out) {
  out.push_back({m_signals.get(), POLLIN, 0});
}

void SignalWatcher::step(Clock::time_point) {
  signalfd_siginfo info;
  while (read(m_signals.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info))
    m_on_signal(static_cast<int>(info.ssi_signo));
}

}  // namespace runner
