#include "runner/config/tcp_sockets.h"

#include <charconv>

#include "runner/core/lines.h"

namespace runner {

namespace {

// The next field of `line` (words between spaces), taken off its front.
std::string_view next_field(std::string_view& line) {
  std::size_t begin = line.find_first_not_of(' ');
  if (begin == std::string_view::npos) return {};
  line.remove_prefix(begin);
  std::string_view field = line.substr(0, line.find(' '));
  line.remove_prefix(field.size());
  return field;
}

// `text`, all of it a hexadecimal number.
bool read_hex(std::string_view text, int& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::vector<TcpSocket> tcp_sockets(std::string_view text) {
  std::vector<TcpSocket> sockets;
  for_each_line(text, [&](std::string_view line) {
    // sl, local_address, rem_address, st
    std::string_view number = next_field(line);
    std::string_view local = next_field(line);
    std::string_view remote = next_field(line);
    std::string_view state = next_field(line);
    std::size_t colon = local.rfind(':');
    TcpSocket socket;
    if (number.size() < 2 || number.back() != ':' || colon == std::string_view::npos ||
        !read_hex(local.substr(colon + 1), socket.port))
      return;
    int st = 0;
    if (remote.find(':') != std::string_view::npos && state.size() == 2 && read_hex(state, st))
      socket.state = st;
    sockets.push_back(socket);
  });
  return sockets;
}

std::set<int> ports_in_use(std::string_view proc_net_tcp) {
  std::set<int> ports;
  for (const TcpSocket& socket : tcp_sockets(proc_net_tcp)) ports.insert(socket.port);
  return ports;
}

std::set<int> listening_ports(std::string_view proc_net_tcp) {
  std::set<int> ports;
  for (const TcpSocket& socket : tcp_sockets(proc_net_tcp))
    if (socket.state == k_tcp_listen) ports.insert(socket.port);
  return ports;
}

}  // namespace runner
