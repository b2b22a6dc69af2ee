// What `runner check --net` concludes from its probes: for each ordered
// pair of hosts, which of the target's addresses answered the source, and
// the warnings a multi-node launch would otherwise meet as a silent hang.
// Pure.
#pragma once

#include <string>
#include <vector>

#include "runner/probe/net_interfaces.h"

namespace runner {

// One host as the check saw it.
struct NetHost {
  std::string name;            // as hosts.yaml names it
  std::string master_address;  // what a gang job would give as master_addr
  std::vector<InterfaceAddress> addresses;
  bool listening = false;  // its listener runs: others could be tried against it
  bool probing = false;    // its prober ran: it tried the others
};

// An address of a host that others try, with the interface it belongs to
// (empty for a name, whose interface the target cannot say).
struct CandidateAddress {
  std::string address;
  std::string interface;
  bool master = false;  // the master address (also when it is an interface's)

  bool operator==(const CandidateAddress&) const = default;
};

// The host's addresses others should reach it on: every address but
// loopback and IPv6 link-local ones, and its master address.
std::vector<CandidateAddress> candidate_addresses(const NetHost& host);

// One connection attempt from host `from` to `address` of host `to`.
struct NetProbe {
  int from = 0;
  int to = 0;
  std::string address;
  bool answered = false;  // the target's listener gave its token
  std::string why;        // when not: what the prober said
};

// One ordered pair's result: its candidates, each with the probe that tried it.
struct PathResult {
  CandidateAddress candidate;
  bool answered = false;
  std::string why;  // empty when answered; "not tried" when no probe came back
};
struct PairReachability {
  int from = 0;
  int to = 0;
  std::vector<PathResult> paths;
};

struct NetAnalysis {
  std::vector<PairReachability> pairs;  // pairs whose both hosts took part, from-major
  std::vector<std::string> warnings;
  bool some_pair_unreachable = false;
};

NetAnalysis analyse_reachability(const std::vector<NetHost>& hosts,
                                 const std::vector<NetProbe>& probes);

}  // namespace runner
