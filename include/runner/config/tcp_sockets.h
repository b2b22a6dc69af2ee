// The TCP sockets a host's /proc/net/tcp and /proc/net/tcp6 list, read
// back: each one's local port and state, the ports any socket holds (what a
// new listener must avoid) and the ports something listens on (what a
// client can connect to). Pure.
#pragma once

#include <optional>
#include <set>
#include <string_view>
#include <vector>

namespace runner {

// The `st` column of a socket that listens (the kernel's TCP_LISTEN).
inline constexpr int k_tcp_listen = 0x0A;

// One socket entry: "  12: 0100007F:1F90 00000000:0000 0A ...".
struct TcpSocket {
  int port = 0;  // of its local address
  // The `st` column (k_tcp_listen, 0x06 TIME_WAIT, ...); nullopt when the
  // line was cut before it (`runner check --net` keeps 44 columns).
  std::optional<int> state;
};

// The socket entries of /proc/net/tcp and /proc/net/tcp6's text,
// concatenated. Lines that are not entries (headers) are skipped.
std::vector<TcpSocket> tcp_sockets(std::string_view proc_net_tcp);

// The local ports of every socket, in any state.
std::set<int> ports_in_use(std::string_view proc_net_tcp);

// The local ports of the sockets that listen: a TIME_WAIT or a client's
// socket on a port is not a server there.
std::set<int> listening_ports(std::string_view proc_net_tcp);

}  // namespace runner
