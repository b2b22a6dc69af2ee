// Which job holds each slot: reserved while taken, held while it runs,
// and the GPU a job holds through another slot of the same GPU.
#include "runner/sched/slot_book.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::make_fleet;

TEST(SlotBook, EverySlotStartsFree) {
  Fleet fleet = make_fleet({{"a", {"0", "1"}}, {"b", {"0"}}});
  SlotBook book(fleet);
  ASSERT_EQ(book.size(), 3);
  for (int slot = 0; slot < book.size(); ++slot) {
    EXPECT_TRUE(book.free(slot));
    EXPECT_EQ(book.holder(slot), 0u);
  }
}

TEST(SlotBook, AReservedSlotIsNotFreeButHasNoHolderUntilItIsHeld) {
  Fleet fleet = make_fleet({{"a", {"0", "1", "2"}}});
  SlotBook book(fleet);
  book.reserve(std::vector<int>{0, 2});
  EXPECT_FALSE(book.free(0));
  EXPECT_TRUE(book.free(1));
  EXPECT_FALSE(book.free(2));
  EXPECT_EQ(book.holder(0), 0u);
  EXPECT_EQ(book.holder(2), 0u);

  book.hold(std::vector<int>{0, 2}, 7);
  EXPECT_EQ(book.holder(0), 7u);
  EXPECT_EQ(book.holder(2), 7u);
  EXPECT_TRUE(book.free(1));
}

TEST(SlotBook, ReleasingFreesExactlyTheSlotsNamed) {
  Fleet fleet = make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}});
  SlotBook book(fleet);
  Placement across_nodes = {{0, 1}, {2, 3}};
  book.hold(across_nodes, 4);
  for (int slot = 0; slot < 4; ++slot) EXPECT_EQ(book.holder(slot), 4u) << slot;
  book.release(std::vector<int>{1});
  EXPECT_TRUE(book.free(1));
  EXPECT_EQ(book.holder(0), 4u);
  book.release(across_nodes);
  for (int slot = 0; slot < 4; ++slot) EXPECT_TRUE(book.free(slot)) << slot;
}

TEST(SlotBook, AGpuIsHeldThroughAnotherSlotOfItsHostWithTheSameGpu) {
  // Host a: two slots on GPU 0 and one on GPU 1; host b: GPU 0 too.
  Fleet fleet = make_fleet({{"a", {"0", "0", "1"}}, {"b", {"0"}}});
  SlotBook book(fleet);
  EXPECT_FALSE(book.gpu_held_through_another_slot(0));
  book.reserve(std::vector<int>{1});  // reserved counts: the job is being taken
  EXPECT_TRUE(book.gpu_held_through_another_slot(0));
  EXPECT_FALSE(book.gpu_held_through_another_slot(1)) << "its own slot is not another";
  EXPECT_FALSE(book.gpu_held_through_another_slot(2)) << "another GPU";
  EXPECT_FALSE(book.gpu_held_through_another_slot(3)) << "another host's GPU 0";
  book.release(std::vector<int>{1});
  EXPECT_FALSE(book.gpu_held_through_another_slot(0));
}

TEST(SlotBook, ASlotWithoutAGpuParameterSharesNoGpu) {
  Fleet fleet = make_fleet({{"a", {"0", "1"}}});
  fleet.slots[0].params.clear();
  fleet.slots[1].params.clear();
  SlotBook book(fleet);
  book.hold(std::vector<int>{1}, 3);
  EXPECT_FALSE(book.gpu_held_through_another_slot(0));
}

}  // namespace
}  // namespace runner
