// Which TCP ports a host uses, from its /proc/net/tcp and /proc/net/tcp6,
// and the first one free from a start. Pure: parses the text it is given.
#pragma once

#include <optional>
#include <set>
#include <string_view>

namespace runner {

// The local ports of every socket the listing shows, in any state (a port
// an established connection holds cannot be bound either). Lines may be cut
// after the local address; the header and malformed lines are skipped.
std::set<int> tcp_ports_in_use(std::string_view proc_net_tcp);

// The lowest port from `from` up to 65535 that is in neither set.
std::optional<int> first_free_port(int from, const std::set<int>& in_use,
                                   const std::set<int>& taken);

}  // namespace runner
