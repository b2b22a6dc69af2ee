// TCP ports on 127.0.0.1 for tests of connections: a port nothing uses, a
// listener that never answers, a port that only a TIME_WAIT holds, and
// whether a port accepts connections.
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

// A port of 127.0.0.1 that nothing listens on but a closed connection's
// socket holds in TIME_WAIT (for a minute): its server (SO_REUSEADDR, as
// servers set it) closed first, as a server that ended does. Throws
// std::runtime_error if it cannot be made.
int port_in_time_wait();

// Whether something on 127.0.0.1 (or `address`) accepts TCP connections on `port`.
bool accepts_connections(int port, const std::string& address = "127.0.0.1");

}  // namespace runner::testing
