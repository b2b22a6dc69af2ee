// TCP ports on 127.0.0.1 for tests of connections: a port nothing uses, a
// listener that never answers, and whether a port accepts connections.
#pragma once

#include <string>

namespace runner::testing {

// A port on 127.0.0.1 that nothing uses: connecting to it is refused, and a
// server may listen on it. Throws std::runtime_error if no socket is had.
int unused_port();

// A socket listening on an unused port of 127.0.0.1 that never accepts: a
// client's connection completes into the backlog and then hears nothing.
// Returns the socket, for the caller to close, and sets `port`. Throws
// std::runtime_error if no socket is had.
int silent_listener(int& port);

// Whether something on 127.0.0.1 (or `address`) accepts TCP connections on `port`.
bool accepts_connections(int port, const std::string& address = "127.0.0.1");

}  // namespace runner::testing
