// A host's interfaces and addresses as it lists them: parse_ip_addr and
// parse_ifconfig on any text, and parse_proc_net_addresses on its three
// parts (/proc/net/if_inet6, fib_trie, route) cut at form feeds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runner/probe/net_interfaces.h"

namespace {

// The text up to the first form feed, taken off `rest`.
std::string_view take_part(std::string_view& rest) {
  std::size_t end = rest.find('\f');
  std::string_view part = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  runner::parse_ip_addr(text);
  runner::parse_ifconfig(text);
  std::string_view rest = text;
  std::string_view if_inet6 = take_part(rest);
  std::string_view fib_trie = take_part(rest);
  runner::parse_proc_net_addresses(if_inet6, fib_trie, rest);
  return 0;
}
