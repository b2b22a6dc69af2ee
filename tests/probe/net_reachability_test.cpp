// What `runner check --net` concludes from its probes: candidates, the
// pairs, and every warning.
#include "runner/probe/net_reachability.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

NetHost host(const std::string& name, std::vector<InterfaceAddress> addresses,
             std::string master = "") {
  NetHost entry;
  entry.name = name;
  entry.master_address = master.empty() ? name : master;
  entry.addresses = std::move(addresses);
  entry.listening = true;
  entry.probing = true;
  return entry;
}

const std::vector<InterfaceAddress> k_node1 = {{"lo", "127.0.0.1", 8, false},
                                               {"lo", "::1", 128, true},
                                               {"eth0", "10.0.0.1", 24, false},
                                               {"eth0", "fe80::1", 64, true},
                                               {"docker0", "172.17.0.1", 16, false}};
const std::vector<InterfaceAddress> k_node2 = {{"lo", "127.0.0.1", 8, false},
                                               {"eth0", "10.0.0.2", 24, false},
                                               {"eth0", "fd00::2", 64, true},
                                               {"docker0", "172.17.0.1", 16, false}};

TEST(CandidateAddresses, LeavesOutLoopbackAndLinkLocalAndAddsTheMasterAddress) {
  EXPECT_EQ(candidate_addresses(host("node1", k_node1)),
            (std::vector<CandidateAddress>{{"10.0.0.1", "eth0", false},
                                           {"172.17.0.1", "docker0", false},
                                           {"node1", "", true}}));
}

TEST(CandidateAddresses, AMasterAddressOfAnInterfaceIsThatCandidateEvenOnLoopback) {
  EXPECT_EQ(candidate_addresses(host("node1", k_node1, "10.0.0.1")),
            (std::vector<CandidateAddress>{{"10.0.0.1", "eth0", true},
                                           {"172.17.0.1", "docker0", false}}));
  EXPECT_EQ(candidate_addresses(host("user@127.0.0.1:2222", k_node1, "127.0.0.1")),
            (std::vector<CandidateAddress>{{"127.0.0.1", "lo", true},
                                           {"10.0.0.1", "eth0", false},
                                           {"172.17.0.1", "docker0", false}}));
}

TEST(CandidateAddresses, AnAddressOnTwoInterfacesIsTriedUnderEach) {
  std::vector<InterfaceAddress> twice = {{"eth0", "10.0.0.1", 24, false},
                                         {"eth0", "10.0.0.1", 24, false},
                                         {"br0", "10.0.0.1", 24, false}};
  EXPECT_EQ(candidate_addresses(host("n", twice, "")).size(), 3u);
}

// Probes from `from` to `to` in which exactly `answered` answered.
std::vector<NetProbe> probes(int from, int to, const std::vector<std::string>& tried,
                             const std::vector<std::string>& answered) {
  std::vector<NetProbe> result;
  for (const std::string& address : tried) {
    bool ok = std::find(answered.begin(), answered.end(), address) != answered.end();
    result.push_back({from, to, address, ok, ok ? "" : "Connection timed out"});
  }
  return result;
}

std::vector<NetProbe> operator+(std::vector<NetProbe> a, const std::vector<NetProbe>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(Reachability, AllPathsWorkingGivesPairsAndNoWarning) {
  NetAnalysis analysis = analyse_reachability(
      {host("node1", k_node1), host("node2", k_node2)},
      probes(0, 1, {"10.0.0.2", "fd00::2", "172.17.0.1", "node2"},
             {"10.0.0.2", "fd00::2", "172.17.0.1", "node2"}) +
          probes(1, 0, {"10.0.0.1", "172.17.0.1", "node1"}, {"10.0.0.1", "172.17.0.1", "node1"}));
  EXPECT_FALSE(analysis.some_pair_unreachable);
  EXPECT_TRUE(analysis.warnings.empty());
  ASSERT_EQ(analysis.pairs.size(), 2u);
  EXPECT_EQ(analysis.pairs[0].from, 0);
  EXPECT_EQ(analysis.pairs[0].to, 1);
  ASSERT_EQ(analysis.pairs[0].paths.size(), 4u);
  EXPECT_TRUE(analysis.pairs[0].paths[0].answered);
  EXPECT_EQ(analysis.pairs[0].paths[3].candidate, (CandidateAddress{"node2", "", true}));
}

TEST(Reachability, NoWorkingPathIsUnreachableAndNamesWhatWasTried) {
  NetAnalysis analysis = analyse_reachability(
      {host("node1", k_node1), host("node2", k_node2)},
      probes(0, 1, {"10.0.0.2", "fd00::2", "172.17.0.1", "node2"}, {}) +
          probes(1, 0, {"10.0.0.1", "172.17.0.1", "node1"}, {"10.0.0.1", "node1"}));
  EXPECT_TRUE(analysis.some_pair_unreachable);
  EXPECT_EQ(analysis.warnings,
            (std::vector<std::string>{
                "node1 cannot reach node2 on any address (tried 10.0.0.2 (eth0), fd00::2 (eth0), "
                "172.17.0.1 (docker0), node2)"}));
  ASSERT_GE(analysis.pairs.size(), 1u);
  ASSERT_GE(analysis.pairs[0].paths.size(), 1u);
  EXPECT_EQ(analysis.pairs[0].paths[0].why, "Connection timed out");
}

TEST(Reachability, APathOnlyOverBridgesIsAWarningButNotUnreachable) {
  NetAnalysis analysis = analyse_reachability(
      {host("node1", k_node1, "10.0.0.1"), host("node2", k_node2, "10.0.0.2")},
      probes(0, 1, {"10.0.0.2", "fd00::2", "172.17.0.1"}, {"172.17.0.1"}) +
          probes(1, 0, {"10.0.0.1", "172.17.0.1"}, {"10.0.0.1", "172.17.0.1"}));
  EXPECT_FALSE(analysis.some_pair_unreachable);
  ASSERT_EQ(analysis.warnings.size(), 2u);
  EXPECT_EQ(analysis.warnings[0],
            "node1 reaches node2 only over host-local interfaces (172.17.0.1 (docker0)): a "
            "bridge or loopback, not the network between the nodes");
  EXPECT_EQ(analysis.warnings[1],
            "node1 cannot reach node2's master address 10.0.0.2 (Connection timed out), which a "
            "multi-node job whose rank 0 is node2 gives its other ranks");
}

TEST(Reachability, AMasterNameThatAnsweredIsNotABridgePath) {
  NetAnalysis analysis = analyse_reachability(
      {host("node1", k_node1), host("node2", k_node2)},
      probes(0, 1, {"10.0.0.2", "fd00::2", "172.17.0.1", "node2"}, {"172.17.0.1", "node2"}) +
          probes(1, 0, {"10.0.0.1", "172.17.0.1", "node1"}, {"10.0.0.1", "node1"}));
  EXPECT_TRUE(analysis.warnings.empty());
}

TEST(Reachability, AnUnreachableMasterAddressIsAWarningOfItsOwn) {
  NetAnalysis analysis = analyse_reachability(
      {host("node1", k_node1), host("node2", k_node2)},
      probes(0, 1, {"10.0.0.2", "fd00::2", "172.17.0.1", "node2"}, {"10.0.0.2"}) +
          probes(1, 0, {"10.0.0.1", "172.17.0.1", "node1"}, {"10.0.0.1", "node1"}));
  EXPECT_FALSE(analysis.some_pair_unreachable);
  EXPECT_EQ(analysis.warnings,
            (std::vector<std::string>{
                "node1 cannot reach node2's master address node2 (Connection timed out), which "
                "a multi-node job whose rank 0 is node2 gives its other ranks"}));
}

TEST(Reachability, ACandidateNoProbeCameBackForIsNotTried) {
  NetAnalysis analysis =
      analyse_reachability({host("node1", k_node1), host("node2", k_node2)},
                           probes(0, 1, {"node2"}, {"node2"}) + probes(1, 0, {"node1"}, {"node1"}));
  ASSERT_GE(analysis.pairs.size(), 1u);
  ASSERT_GE(analysis.pairs[0].paths.size(), 1u);
  EXPECT_EQ(analysis.pairs[0].paths[0].why, "not tried");
  EXPECT_FALSE(analysis.pairs[0].paths[0].answered);
  EXPECT_FALSE(analysis.some_pair_unreachable);
}

TEST(Reachability, HostsThatDidNotListenOrProbeMakeNoPairs) {
  NetHost silent = host("node2", k_node2);
  silent.listening = false;
  NetHost blind = host("node3", {});
  blind.probing = false;
  NetAnalysis analysis = analyse_reachability({host("node1", k_node1), silent, blind},
                                              probes(1, 0, {"node1"}, {"node1"}) +
                                                  probes(0, 2, {"node3"}, {"node3"}) +
                                                  probes(1, 2, {"node3"}, {}));
  ASSERT_EQ(analysis.pairs.size(), 3u);
  EXPECT_EQ(std::make_pair(analysis.pairs[0].from, analysis.pairs[0].to), std::make_pair(0, 2));
  EXPECT_EQ(std::make_pair(analysis.pairs[1].from, analysis.pairs[1].to), std::make_pair(1, 0));
  EXPECT_EQ(std::make_pair(analysis.pairs[2].from, analysis.pairs[2].to), std::make_pair(1, 2));
  EXPECT_TRUE(analysis.some_pair_unreachable);
  EXPECT_EQ(analysis.warnings, (std::vector<std::string>{
                                   "node2 cannot reach node3 on any address (tried node3)"}));
}

TEST(Reachability, OneHostHasNoPairs) {
  NetAnalysis analysis = analyse_reachability({host("node1", k_node1)}, {});
  EXPECT_TRUE(analysis.pairs.empty());
  EXPECT_TRUE(analysis.warnings.empty());
  EXPECT_FALSE(analysis.some_pair_unreachable);
}

}  // namespace
}  // namespace runner
