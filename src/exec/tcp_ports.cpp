// Ports in use from /proc/net/tcp{,6}; see tcp_ports.h.
#include "runner/exec/tcp_ports.h"

#include <sstream>
#include <string>

namespace runner {

// "   0: 00000000:07E8 00000000:0000 0A ..." (tcp6: 32 hex digits before
// the colon): the second field's hex digits after its colon.
std::set<int> tcp_ports_in_use(std::string_view proc_net_tcp) {
  std::set<int> ports;
  std::istringstream lines{std::string(proc_net_tcp)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string slot, local;
    if (!(fields >> slot >> local) || slot.empty() || slot.back() != ':') continue;
    std::size_t colon = local.find(':');
    if (colon != 8 && colon != 32) continue;
    std::string port = local.substr(colon + 1);
    if (port.size() != 4 || port.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      continue;
    }
    ports.insert(static_cast<int>(std::stoul(port, nullptr, 16)));
  }
  return ports;
}

std::optional<int> first_free_port(int from, const std::set<int>& in_use,
                                   const std::set<int>& taken) {
  for (int port = from; port <= 65535; ++port) {
    if (!in_use.count(port) && !taken.count(port)) return port;
  }
  return std::nullopt;
}

}  // namespace runner
