// `runner check --net` across hosts that are machines of their own: two
// network namespaces on a bridge, each with its sshd. They reach each other
// on their bridge address, which is also each one's master address; a
// master address given with `addr:` that the other cannot reach is said.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "support/netns_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;

// The reachability line of `from` -> `to`, after its "from -> to: ".
std::string pair_line(const std::string& out, const std::string& from, const std::string& to) {
  std::string start = "  " + from + " -> " + to + ": ";
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(start, 0) == 0) return line.substr(start.size());
  }
  return "";
}

TEST(CheckNetNamespaces, TwoHostsReachEachOtherOnTheirBridgeAddress) {
  testing::TempDir dir;
  std::string why_not;
  auto fleet = testing::NetnsFleet::start(dir, 2, why_not);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  fleet->write_hosts(1);
  ProcessResult r = testing::run_process(fleet->runner({"check", "--net"}));
  EXPECT_EQ(r.status, 0) << r.out << r.err;

  std::string interface = testing::NetnsFleet::k_interface;
  std::string first = fleet->address(0), second = fleet->address(1);
  for (const std::string& host : {first, second}) {
    EXPECT_NE(r.out.find(host + ": read with "), std::string::npos) << r.out;
    // Each namespace has its loopback and its end of the bridge, and nothing else.
    EXPECT_NE(r.out.find("\n  " + interface + "  " + host + "/24"), std::string::npos) << r.out;
  }
  EXPECT_EQ(pair_line(r.out, first, second), second + " (" + interface + ") [master]") << r.out;
  EXPECT_EQ(pair_line(r.out, second, first), first + " (" + interface + ") [master]") << r.out;
  EXPECT_EQ(r.out.find("warnings:"), std::string::npos) << r.out;
}

TEST(CheckNetNamespaces, AMasterAddressTheOtherCannotReachIsAWarningAndAFailedPath) {
  testing::TempDir dir;
  std::string why_not;
  auto fleet = testing::NetnsFleet::start(dir, 2, why_not);
  RUNNER_REQUIRE_NETNS_FLEET(fleet, why_not);
  // Host 0 has a second address, on its loopback interface, that no route
  // leads to, and gives it as its master address.
  testing::ProcessResult added =
      fleet->run_on(0, {"ip", "addr", "add", "10.255.77.1/32", "dev", "lo"});
  ASSERT_EQ(added.status, 0) << added.err;
  std::string first = fleet->address(0), second = fleet->address(1);
  dir.write("hosts.yaml", "- hostname: " + first + "\n  addr: 10.255.77.1\n- " + second + "\n");
  ProcessResult r = testing::run_process(fleet->runner({"check", "--net"}));
  // The pair still works over the bridge: a warning, not a failure.
  EXPECT_EQ(r.status, 0) << r.out << r.err;

  std::string towards_first = pair_line(r.out, second, first);
  EXPECT_EQ(towards_first.rfind(first + " (fleet0); failed: 10.255.77.1 (lo) [master]: ", 0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("warnings:\n  " + second + " cannot reach " + first +
                       "'s master address 10.255.77.1 ("),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace runner
