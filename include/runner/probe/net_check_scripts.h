// The sh commands `runner check --net` runs on each host, and the parsers
// of what they print: a survey (the tools there are, the interfaces and
// their addresses, the TCP ports in use), a listener that answers every
// connection with a token for a while, and a prober that connects to a list
// of addresses and says what answered. Each works with what the host has:
// python3, perl, nc, or bash's /dev/tcp. Pure: builds and parses text.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/probe/net_interfaces.h"

namespace runner {

// What the survey command found on one host.
struct HostSurvey {
  std::vector<std::string> tools;  // of python3, perl, nc, bash, timeout
  std::string interfaces_from;     // "ip -o addr", "ifconfig -a", "/proc/net"; empty: none
  std::vector<InterfaceAddress> addresses;
  std::set<int> ports_in_use;
};

std::string host_survey_command();
HostSurvey parse_host_survey(std::string_view output);

// The tool a listener uses on a host: python3, else perl, else nc; none
// without any of them.
std::optional<std::string> listener_tool(const std::vector<std::string>& tools);
// Listens on `port` of every address (IPv4 and IPv6) and answers every
// connection with `token` and a newline, for `lifetime_seconds` at most.
// Prints k_listening_line once it listens, or a line that says why it
// cannot (and exits non-zero).
std::string listener_command(const std::string& tool, int port, const std::string& token,
                             int lifetime_seconds);
inline constexpr std::string_view k_listening_line = "listening";

// The tool a prober uses: python3, else perl, else bash (/dev/tcp), else nc.
std::optional<std::string> prober_tool(const std::vector<std::string>& tools);

// An address (or name) and port to connect to, and what its listener says.
struct ProbeTarget {
  std::string address;
  int port = 0;
  std::string token;
};
// Connects to every target at once, each with `timeout_seconds` (tried
// once more a second later when the token did not come), and prints one
// line per target: "probe ADDRESS PORT WHAT-IT-READ-OR-WHY-NOT".
std::string prober_command(const std::string& tool, const std::vector<std::string>& tools,
                           const std::vector<ProbeTarget>& targets, int timeout_seconds);

// One line of the prober's output.
struct ProbeAnswer {
  std::string address;
  int port = 0;
  std::string said;  // the token, or why not ("Connection refused", "no answer")

  bool operator==(const ProbeAnswer&) const = default;
};
std::vector<ProbeAnswer> parse_probe_answers(std::string_view output);

}  // namespace runner
