// Reachability between hosts from the probes of `runner check --net`; see
// net_reachability.h.
#include "runner/probe/net_reachability.h"

#include <fmt/format.h>

#include <algorithm>

namespace runner {

namespace {

std::string describe(const CandidateAddress& candidate) {
  if (candidate.interface.empty()) return candidate.address;
  return fmt::format("{} ({})", candidate.address, candidate.interface);
}

std::string list_of(const std::vector<PathResult>& paths) {
  std::vector<std::string> names;
  for (const PathResult& path : paths) names.push_back(describe(path.candidate));
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

std::vector<CandidateAddress> candidate_addresses(const NetHost& host) {
  std::vector<CandidateAddress> candidates;
  bool master_listed = false;
  for (const InterfaceAddress& entry : host.addresses) {
    bool master = entry.address == host.master_address;
    if (!master && (is_loopback_address(entry.address) || is_ipv6_link_local(entry.address))) {
      continue;
    }
    CandidateAddress candidate{entry.address, entry.interface, master};
    if (std::find(candidates.begin(), candidates.end(), candidate) != candidates.end()) continue;
    master_listed = master_listed || master;
    candidates.push_back(std::move(candidate));
  }
  if (!master_listed && !host.master_address.empty()) {
    candidates.push_back({host.master_address, "", true});
  }
  return candidates;
}

NetAnalysis analyse_reachability(const std::vector<NetHost>& hosts,
                                 const std::vector<NetProbe>& probes) {
  NetAnalysis analysis;
  for (int from = 0; from < static_cast<int>(hosts.size()); ++from) {
    for (int to = 0; to < static_cast<int>(hosts.size()); ++to) {
      if (from == to || !hosts[from].probing || !hosts[to].listening) continue;
      PairReachability pair{from, to, {}};
      for (const CandidateAddress& candidate : candidate_addresses(hosts[to])) {
        PathResult path{candidate, false, "not tried"};
        for (const NetProbe& probe : probes) {
          if (probe.from != from || probe.to != to || probe.address != candidate.address) continue;
          path.answered = probe.answered;
          path.why = probe.answered ? "" : probe.why;
        }
        pair.paths.push_back(std::move(path));
      }
      std::vector<PathResult> working;
      for (const PathResult& path : pair.paths) {
        if (path.answered) working.push_back(path);
      }
      const std::string& source = hosts[from].name;
      const std::string& target = hosts[to].name;
      if (working.empty()) {
        analysis.some_pair_unreachable = true;
        analysis.warnings.push_back(fmt::format("{} cannot reach {} on any address (tried {})",
                                                source, target, list_of(pair.paths)));
      } else if (std::all_of(working.begin(), working.end(), [](const PathResult& path) {
                   return !path.candidate.interface.empty() &&
                          is_host_local_interface(path.candidate.interface);
                 })) {
        analysis.warnings.push_back(fmt::format(
            "{} reaches {} only over host-local interfaces ({}): a bridge or loopback, not the "
            "network between the nodes",
            source, target, list_of(working)));
      }
      for (const PathResult& path : pair.paths) {
        if (path.candidate.master && !path.answered && !working.empty()) {
          analysis.warnings.push_back(fmt::format(
              "{} cannot reach {}'s master address {} ({}), which a multi-node job whose rank "
              "0 is {} gives its other ranks",
              source, target, path.candidate.address, path.why, target));
        }
      }
      analysis.pairs.push_back(std::move(pair));
    }
  }
  return analysis;
}

}  // namespace runner
