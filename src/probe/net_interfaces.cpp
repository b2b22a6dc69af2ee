// Parsers of interface listings; see net_interfaces.h.
#include "runner/probe/net_interfaces.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <sstream>
#include <tuple>

namespace runner {

namespace {

std::vector<std::string> words_of(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

std::optional<int> number(std::string_view text) {
  if (text.empty() || text.size() > 3 ||
      text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::stoi(std::string(text));
}

std::optional<std::uint32_t> ipv4_bits(const std::string& address) {
  in_addr parsed{};
  if (inet_pton(AF_INET, address.c_str(), &parsed) != 1) return std::nullopt;
  return ntohl(parsed.s_addr);
}

bool is_address(const std::string& text, bool ipv6) {
  std::array<unsigned char, 16> buffer{};
  return inet_pton(ipv6 ? AF_INET6 : AF_INET, text.c_str(), buffer.data()) == 1;
}

// The prefix length of a netmask (host order); -1 for a mask with holes.
int prefix_of_mask_bits(std::uint32_t bits) {
  int prefix = 0;
  while (prefix < 32 && (bits & (0x80000000u >> prefix))) ++prefix;
  std::uint32_t contiguous = prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
  return bits == contiguous ? prefix : -1;
}

// "255.255.255.0" or "0xffffff00" -> 24.
int prefix_of_mask(const std::string& mask) {
  std::optional<std::uint32_t> bits;
  if (mask.rfind("0x", 0) == 0 && mask.size() == 10 &&
      mask.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos) {
    bits = static_cast<std::uint32_t>(std::stoul(mask.substr(2), nullptr, 16));
  } else {
    bits = ipv4_bits(mask);
  }
  return bits ? prefix_of_mask_bits(*bits) : -1;
}

// "fd00::2/64" -> ("fd00::2", 64); "fe80::1%lo0" -> ("fe80::1", -1).
std::pair<std::string, int> split_prefix(std::string text) {
  int prefix = -1;
  if (std::size_t slash = text.find('/'); slash != std::string::npos) {
    prefix = number(text.substr(slash + 1)).value_or(-1);
    text.erase(slash);
  }
  if (std::size_t scope = text.find('%'); scope != std::string::npos) text.erase(scope);
  return {text, prefix};
}

void add_unique(std::vector<InterfaceAddress>& all, InterfaceAddress entry) {
  if (std::find(all.begin(), all.end(), entry) == all.end()) all.push_back(std::move(entry));
}

}  // namespace

// "4: eth0    inet 192.0.2.2/24 brd 192.0.2.255 scope global eth0\ ..."
std::vector<InterfaceAddress> parse_ip_addr(std::string_view listing) {
  std::vector<InterfaceAddress> found;
  for (std::string_view line : lines_of(listing)) {
    std::vector<std::string> words = words_of(line);
    if (words.size() < 4 || words[0].back() != ':') continue;
    if (words[2] != "inet" && words[2] != "inet6") continue;
    InterfaceAddress entry;
    entry.interface = words[1].substr(0, words[1].find('@'));
    entry.ipv6 = words[2] == "inet6";
    std::tie(entry.address, entry.prefix) = split_prefix(words[3]);
    if (is_address(entry.address, entry.ipv6)) add_unique(found, std::move(entry));
  }
  return found;
}

// A block per interface, its first line unindented: "eth0: flags=..." or
// "eth0      Link encap:...". Addresses: "inet 192.0.2.2  netmask
// 255.255.255.0", "inet addr:192.0.2.2  Mask:255.255.255.0", "inet6
// fd00::2  prefixlen 64", "inet6 addr: fd00::2/64 Scope:Global", "inet
// 127.0.0.1 netmask 0xff000000".
std::vector<InterfaceAddress> parse_ifconfig(std::string_view listing) {
  std::vector<InterfaceAddress> found;
  std::string interface;
  for (std::string_view line : lines_of(listing)) {
    std::vector<std::string> words = words_of(line);
    if (words.empty()) continue;
    if (line.front() != ' ' && line.front() != '\t') {
      interface = words[0];
      if (interface.back() == ':') interface.pop_back();
      continue;
    }
    if (interface.empty() || (words[0] != "inet" && words[0] != "inet6") || words.size() < 2) {
      continue;
    }
    InterfaceAddress entry;
    entry.interface = interface;
    entry.ipv6 = words[0] == "inet6";
    std::size_t at = 1;
    if (words[1] == "addr:" && words.size() > 2) at = 2;
    std::string address = words[at];
    if (address.rfind("addr:", 0) == 0) address.erase(0, 5);
    std::tie(entry.address, entry.prefix) = split_prefix(address);
    for (std::size_t i = at + 1; i < words.size(); ++i) {
      const std::string& word = words[i];
      if ((word == "netmask" || word == "prefixlen") && i + 1 < words.size()) {
        const std::string& value = words[i + 1];
        entry.prefix = word == "netmask" ? prefix_of_mask(value) : number(value).value_or(-1);
      } else if (word.rfind("Mask:", 0) == 0) {
        entry.prefix = prefix_of_mask(word.substr(5));
      }
    }
    if (is_address(entry.address, entry.ipv6)) add_unique(found, std::move(entry));
  }
  return found;
}

std::vector<InterfaceAddress> parse_proc_net_addresses(std::string_view if_inet6,
                                                       std::string_view fib_trie,
                                                       std::string_view route) {
  std::vector<InterfaceAddress> found;
  struct Route {
    std::string interface;
    std::uint32_t destination;
    std::uint32_t mask;
  };
  std::vector<Route> routes;
  for (std::string_view line : lines_of(route)) {
    std::vector<std::string> words = words_of(line);
    if (words.size() < 8 || words[1].size() != 8 || words[7].size() != 8) continue;
    if ((words[1] + words[7]).find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      continue;
    }
    // The kernel prints the network-order word as a number of this host.
    auto host_order = [](const std::string& hex) {
      return ntohl(static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16)));
    };
    std::uint32_t mask = host_order(words[7]);
    if (mask != 0) routes.push_back({words[0], host_order(words[1]), mask});
  }
  // IPv4: "|-- 192.0.2.2" followed by "/32 host LOCAL".
  std::vector<std::string_view> trie = lines_of(fib_trie);
  for (std::size_t i = 0; i + 1 < trie.size(); ++i) {
    std::vector<std::string> leaf = words_of(trie[i]);
    std::vector<std::string> kind = words_of(trie[i + 1]);
    if (leaf.size() != 2 || leaf[0] != "|--" || kind.size() < 3 || kind[0] != "/32" ||
        kind[1] != "host" || kind[2] != "LOCAL") {
      continue;
    }
    std::optional<std::uint32_t> bits = ipv4_bits(leaf[1]);
    if (!bits) continue;
    InterfaceAddress entry{"", leaf[1], -1, false};
    const Route* best = nullptr;
    for (const Route& candidate : routes) {
      if ((*bits & candidate.mask) == candidate.destination &&
          (!best || candidate.mask > best->mask)) {
        best = &candidate;
      }
    }
    if (best) {
      entry.interface = best->interface;
      entry.prefix = prefix_of_mask_bits(best->mask);
    }
    if (!best && is_loopback_address(entry.address)) {
      entry.interface = "lo";
      entry.prefix = 8;
    }
    if (!entry.interface.empty()) add_unique(found, std::move(entry));
  }
  // "fd000000000000000000000000000002 04 40 00 82     eth0"
  for (std::string_view line : lines_of(if_inet6)) {
    std::vector<std::string> words = words_of(line);
    if (words.size() != 6 || words[0].size() != 32) continue;
    std::array<unsigned char, 16> bytes{};
    bool hex = (words[0] + words[2]).find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
    if (!hex || words[2].size() > 2) continue;
    for (std::size_t b = 0; b < 16; ++b) {
      bytes[b] = static_cast<unsigned char>(std::stoul(words[0].substr(b * 2, 2), nullptr, 16));
    }
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, bytes.data(), text, sizeof text);
    add_unique(found, {words[5], text, static_cast<int>(std::stoul(words[2], nullptr, 16)), true});
  }
  return found;
}

bool is_loopback_address(std::string_view address) {
  return address == "::1" || (address.rfind("127.", 0) == 0 && is_address(std::string(address), false));
}

bool is_ipv6_link_local(std::string_view address) {
  std::array<unsigned char, 16> bytes{};
  if (inet_pton(AF_INET6, std::string(address).c_str(), bytes.data()) != 1) return false;
  return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80;
}

bool is_host_local_interface(std::string_view interface) {
  // "lo", and BSD's "lo0".
  if (interface.rfind("lo", 0) == 0 &&
      interface.find_first_not_of("0123456789", 2) == std::string_view::npos) {
    return true;
  }
  for (std::string_view prefix :
       {"docker", "br-", "virbr", "veth", "cni", "podman", "lxcbr", "lxdbr"}) {
    if (interface.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace runner
