// Private to the SSH executor: what the server sent on a connection's
// socket, as libssh2's receive hook saw it. The connector that sets the
// session up and the connection that runs its channels both read it; it
// lives as long as the session. Threading: none.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "runner/core/clock.h"

namespace runner::ssh {

struct InboundTrace {
  // `now`: the connection's time of its current step.
  explicit InboundTrace(const Clock::time_point& now) : now(now) {}

  // Forgets what an earlier socket said, before a new one is used.
  void reset();

  // libssh2's LIBSSH2_CALLBACK_RECV; the session's abstract is the trace.
  static ssize_t receive_hook(int fd, void* buffer, size_t length, int flags, void** abstract);

  const Clock::time_point& now;
  // Whether the socket is TCP (not a tunnel's or a ProxyCommand's socketpair).
  bool over_tcp = false;
  std::string first_bytes;  // the start of what the server sent
  bool peer_closed = false;
  int socket_errno = 0;
  Clock::time_point last_inbound{};
};

}  // namespace runner::ssh
