// Handoff: what one thread gives another arrives whole and in order, the
// giver held back while the taker is behind, and never left waiting for a
// taker that stopped.
#include "runner/core/handoff.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace runner {
namespace {

TEST(Handoff, EveryItemArrivesInTheOrderGivenThroughASmallCapacity) {
  Handoff<int> handoff(2);
  std::jthread giver([&] {
    for (int i = 0; i < 10000; ++i) handoff.give(i);
    handoff.close();
  });
  std::vector<int> taken;
  while (std::optional<int> item = handoff.take()) taken.push_back(*item);
  ASSERT_EQ(taken.size(), 10000u);
  for (int i = 0; i < 10000; ++i) EXPECT_EQ(taken[static_cast<std::size_t>(i)], i);
}

TEST(Handoff, WhatWaitsIsStillTakenAfterTheGiverClosed) {
  Handoff<int> handoff(4);
  handoff.give(1);
  handoff.give(2);
  handoff.close();
  EXPECT_EQ(handoff.take(), 1);
  EXPECT_EQ(handoff.take(), 2);
  EXPECT_EQ(handoff.take(), std::nullopt);
}

TEST(Handoff, AGiverIsNotLeftWaitingByATakerThatStopped) {
  Handoff<int> handoff(1);
  std::jthread giver([&] {
    for (int i = 0; i < 1000; ++i) handoff.give(i);
    handoff.close();
  });
  EXPECT_EQ(handoff.take(), 0);
  handoff.stop();
  giver.join();  // would hang if a give still waited for room
  EXPECT_EQ(handoff.take(), std::nullopt);
}

}  // namespace
}  // namespace runner
