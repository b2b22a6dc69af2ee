// A ProxyCommand's process and its socket (see ssh_proxy_command.h).
#include "ssh_proxy_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "../spawn_in_own_group.h"

namespace runner::ssh {

namespace {

// How long a hung-up command may take to exit before it is killed.
constexpr int k_exit_grace_ms = 100;

}  // namespace

Result<std::unique_ptr<ProxyCommand>> ProxyCommand::start(const std::string& command) {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    return Status::error(fmt::format("socketpair: {}", std::strerror(errno)));
  const char* shell = std::getenv("SHELL");
  if (shell == nullptr || *shell == '\0') shell = "/bin/sh";
  std::string script = "exec " + command;
  const char* argv[] = {shell, "-c", script.c_str(), nullptr};

  pid_t pid = -1;
  int rc = spawn_in_own_group(pid, shell, argv, ChildStreams{ends[1], ends[1], k_kept_stream});
  ::close(ends[1]);
  if (rc != 0) {
    ::close(ends[0]);
    return Status::error(fmt::format("cannot run {}: {}", shell, std::strerror(rc)));
  }
  ::fcntl(ends[0], F_SETFL, ::fcntl(ends[0], F_GETFL) | O_NONBLOCK);
  return std::unique_ptr<ProxyCommand>(new ProxyCommand(pid, ends[0]));
}

ProxyCommand::~ProxyCommand() {
  if (m_fd >= 0) ::close(m_fd);
  ::kill(-m_pid, SIGHUP);
  // Woken as soon as it exits: a relay that obeys costs the loop no sleep.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m_pid, 0));
  if (pidfd >= 0) {
    pollfd exited{pidfd, POLLIN, 0};
    ::poll(&exited, 1, k_exit_grace_ms);
    ::close(pidfd);
  }
  if (::waitpid(m_pid, nullptr, WNOHANG) != 0) return;
  ::kill(-m_pid, SIGKILL);
  ::waitpid(m_pid, nullptr, 0);
}

int ProxyCommand::take_fd() { return std::exchange(m_fd, -1); }

}  // namespace runner::ssh
