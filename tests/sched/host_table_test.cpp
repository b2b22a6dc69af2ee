// The reconnect backoff: doubling from the first wait up to the longest,
// each wait between half and all of its step.
#include "runner/sched/host_table.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

using namespace std::chrono_literals;

TEST(HostTable, ReconnectWaitsDoubleUpToTheLongestWithJitter) {
  HostTable hosts(1, Backoff{1s, 8s});
  const Clock::duration steps[] = {1s, 2s, 4s, 8s, 8s, 8s};
  for (int tries = 0; tries < 6; ++tries) {
    for (int sample = 0; sample < 50; ++sample) {
      Clock::duration wait = hosts.reconnect_delay(tries);
      EXPECT_GE(wait, steps[tries] / 2) << "try " << tries;
      EXPECT_LE(wait, steps[tries]) << "try " << tries;
    }
  }
}

TEST(HostTable, SaysWhetherAnyHostIsInAStateAndWhetherAnyIsUsable) {
  HostTable hosts(2, Backoff{});
  EXPECT_TRUE(hosts.any(HostState::connecting));
  hosts[0].state = HostState::failed;
  hosts[1].state = HostState::set_aside;
  EXPECT_FALSE(hosts.any_usable());
  hosts[1].state = HostState::reconnecting;
  EXPECT_TRUE(hosts.any_usable());
  EXPECT_FALSE(hosts[0].needs_cleaning());
  hosts[0].leftover_groups.push_back({1234, "m"});
  EXPECT_TRUE(hosts[0].needs_cleaning());
}

}  // namespace
}  // namespace runner
