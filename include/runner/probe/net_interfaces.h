// A host's network interfaces and their addresses, read from what the host
// prints: `ip -o addr`, `ifconfig -a` (Linux net-tools old and new, BSD,
// busybox), or, without either, /proc/net/if_inet6 with /proc/net/fib_trie
// and /proc/net/route. Pure: parses the text it is given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace runner {

// One address of one interface.
struct InterfaceAddress {
  std::string interface;  // "eth0" ("veth12@if3" is given as "veth12")
  std::string address;    // "192.0.2.2", "fd00::2" (no scope suffix)
  int prefix = -1;        // 24, 64; -1 when the listing does not say
  bool ipv6 = false;

  bool operator==(const InterfaceAddress&) const = default;
};

std::vector<InterfaceAddress> parse_ip_addr(std::string_view listing);
std::vector<InterfaceAddress> parse_ifconfig(std::string_view listing);
// IPv6 from /proc/net/if_inet6; IPv4 from fib_trie's local host addresses,
// each given the interface of /proc/net/route's most specific route that
// contains it (loopback addresses: "lo").
std::vector<InterfaceAddress> parse_proc_net_addresses(std::string_view if_inet6,
                                                       std::string_view fib_trie,
                                                       std::string_view route);

// 127.0.0.0/8 and ::1.
bool is_loopback_address(std::string_view address);
// fe80::/10: usable only with a scope (%eth0), never as a master address.
bool is_ipv6_link_local(std::string_view address);
// Interfaces that stay on the host or in its containers: lo (lo0), docker*,
// br-*, virbr*, veth*, cni*, podman*, lxcbr*, lxdbr*. A path between two
// hosts over one of these works by accident (the same private subnet on
// both), not over the network the launcher needs.
bool is_host_local_interface(std::string_view interface);

}  // namespace runner
