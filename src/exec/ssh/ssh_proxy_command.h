// Private to the SSH executor: a host reached through ProxyCommand. As ssh
// does, the command runs as `$SHELL -c 'exec COMMAND'` (/bin/sh without
// $SHELL) with its stdin and stdout on a socket, and the connection uses the
// other end of the socketpair as its own socket; its stderr is runner's. It
// runs in a process group of its own, so that an interrupt typed at the
// terminal reaches runner and not the link to the host.
// Threading: none.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "runner/core/result.h"

namespace runner::ssh {

class ProxyCommand {
 public:
  // Starts `command`, or says why it cannot be started.
  static Result<std::unique_ptr<ProxyCommand>> start(const std::string& command);
  // Hangs the command's process group up (SIGHUP, as ssh does) and reaps
  // the command; a group still there after a moment is killed.
  ~ProxyCommand();
  ProxyCommand(const ProxyCommand&) = delete;
  ProxyCommand& operator=(const ProxyCommand&) = delete;

  // The connection's end of the socketpair, non-blocking; the caller closes it.
  int take_fd();

 private:
  ProxyCommand(pid_t pid, int fd) : m_pid(pid), m_fd(fd) {}

  pid_t m_pid;
  int m_fd;
};

}  // namespace runner::ssh
