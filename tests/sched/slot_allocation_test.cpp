// Which of a host's slots a job of k slots gets: first fit on blocks
// aligned to k, as NVLink pairs and quads are, then looser fits; or, with
// `allocation_policy: buddy`, aligned power-of-two blocks only.
#include "runner/sched/slot_allocation.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace runner {
namespace {

// "x.x." : slot 0 busy, 1 free, 2 busy, 3 free.
std::vector<bool> free_slots(const std::string& map) {
  std::vector<bool> free;
  for (char c : map) free.push_back(c == '.');
  return free;
}

struct Case {
  std::string map;
  int k;
  Allocation policy;
  std::vector<int> expected;  // empty: does not fit
};

TEST(SlotAllocation, FirstFitPrefersAlignedBlocksThenLooserOnes) {
  const Case cases[] = {
      {"....", 1, Allocation::first_fit, {0}},
      {"x...", 1, Allocation::first_fit, {1}},
      {"x...", 2, Allocation::first_fit, {2, 3}},
      {"x...", 3, Allocation::first_fit, {1, 2, 3}},
      {"........", 4, Allocation::first_fit, {0, 1, 2, 3}},
      {"x.......", 4, Allocation::first_fit, {4, 5, 6, 7}},
      {"x...x...", 4, Allocation::first_fit, {1, 2, 3, 5}},  // no block: any free slots
      {"x...x...", 3, Allocation::first_fit, {1, 2, 3}},
      {"......", 3, Allocation::first_fit, {0, 1, 2}},
      {"xx.x...x", 3, Allocation::first_fit, {4, 5, 6}},  // an even start before any
      {"x.x..x..", 2, Allocation::first_fit, {6, 7}},
      {"x.x.xx..", 2, Allocation::first_fit, {6, 7}},
      {"x.x.x.x.", 2, Allocation::first_fit, {1, 3}},  // no block: any free slots
      {".x..", 2, Allocation::first_fit, {2, 3}},
      {"x..x", 2, Allocation::first_fit, {1, 2}},  // contiguous, not aligned
      {"xxx.", 2, Allocation::first_fit, {}},
      {"", 1, Allocation::first_fit, {}},
  };
  for (const Case& c : cases)
    EXPECT_EQ(choose_slots(free_slots(c.map), c.k, c.policy).value_or(std::vector<int>{}),
              c.expected)
        << c.map << " k=" << c.k;
}

TEST(SlotAllocation, BuddyTakesOnlyAlignedPowerOfTwoBlocks) {
  const Case cases[] = {
      {"....", 1, Allocation::buddy, {0}},
      {"x...", 2, Allocation::buddy, {2, 3}},
      {"x..x", 2, Allocation::buddy, {}},  // first fit would give 1,2
      {"x.......", 4, Allocation::buddy, {4, 5, 6, 7}},
      {"..x.....", 4, Allocation::buddy, {4, 5, 6, 7}},
      {"x.x.x.x.", 2, Allocation::buddy, {}},
      {"......", 3, Allocation::buddy, {}},  // not a power of two
      {"........", 8, Allocation::buddy, {0, 1, 2, 3, 4, 5, 6, 7}},
  };
  for (const Case& c : cases)
    EXPECT_EQ(choose_slots(free_slots(c.map), c.k, c.policy).value_or(std::vector<int>{}),
              c.expected)
        << c.map << " k=" << c.k;
}

TEST(SlotAllocation, NamesAndPolicyText) {
  EXPECT_EQ(parse_allocation("first_fit"), Allocation::first_fit);
  EXPECT_EQ(parse_allocation("first-fit"), Allocation::first_fit);
  EXPECT_EQ(parse_allocation("firstfit"), Allocation::first_fit);
  EXPECT_EQ(parse_allocation("buddy"), Allocation::buddy);
  EXPECT_EQ(parse_allocation("Buddy"), std::nullopt);
  EXPECT_EQ(parse_allocation(""), std::nullopt);
  EXPECT_EQ(allocation_name(Allocation::buddy), "buddy");
  EXPECT_EQ(allocation_name(Allocation::first_fit), "first_fit");
}

}  // namespace
}  // namespace runner
