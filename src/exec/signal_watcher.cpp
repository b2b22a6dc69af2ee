#include "runner/exec/signal_watcher.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace runner {

SignalWatcher::SignalWatcher(std::function<void(int)> on_signal)
    : m_on_signal(std::move(on_signal)) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigprocmask(SIG_BLOCK, &set, &m_previous);
  m_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (m_fd < 0) {
    int error = errno;
    sigprocmask(SIG_SETMASK, &m_previous, nullptr);
    throw std::system_error(error, std::generic_category(), "signalfd");
  }
}

SignalWatcher::~SignalWatcher() {
  close(m_fd);
  sigprocmask(SIG_SETMASK, &m_previous, nullptr);
}

void SignalWatcher::poll_fds(std::vector<pollfd>& out) { out.push_back({m_fd, POLLIN, 0}); }

void SignalWatcher::step(Clock::time_point) {
  signalfd_siginfo info;
  while (read(m_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info))
    m_on_signal(static_cast<int>(info.ssi_signo));
}

}  // namespace runner
