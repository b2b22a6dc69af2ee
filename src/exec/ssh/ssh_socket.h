// Private to the SSH executor: name resolution and non-blocking TCP
// sockets with the options SSH sessions need.
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

#include "runner/core/result.h"

namespace runner::ssh {

// One address a host name resolved to.
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  std::string text;  // "127.0.0.1:2222", "[::1]:22"
};

// The addresses of `host` (getaddrinfo, blocking), in the resolver's order
// (at least one), or why there are none.
Result<std::vector<SocketAddress>> resolve_host(const std::string& host, int port);

// A non-blocking, close-on-exec TCP socket with TCP_NODELAY and SO_KEEPALIVE,
// its connect() started. Returns the fd, or -1 with `error_number` set.
// `in_progress` is true while the connect has not finished yet.
int start_tcp_connect(const SocketAddress& address, bool& in_progress, int& error_number);

// For a socket whose connect was in progress: -1 while still in progress,
// 0 once connected, or the errno of the failed connect.
int tcp_connect_result(int fd);

}  // namespace runner::ssh
