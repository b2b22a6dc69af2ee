#include "runner/exec/gpu_listing.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

TEST(GpuListing, ReadsIndexModelAndUuidOfEachGpu) {
  std::vector<DetectedGpu> gpus = parse_gpu_listing(
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-11111111-2222-3333-4444-555555555555)\n"
      "  MIG 1g.10gb  Device  0: (UUID: MIG-aaaa)\n"
      "GPU 1: Tesla V100 (UUID: GPU-66)\r\n"
      "GPU 2: Old Card\n"
      "No devices were found\n");
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].index, "0");
  EXPECT_EQ(gpus[0].name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpus[0].uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(gpus[1].name, "Tesla V100");
  EXPECT_EQ(gpus[1].uuid, "GPU-66");
  EXPECT_EQ(gpus[2].name, "Old Card");
  EXPECT_EQ(gpus[2].uuid, "");
  EXPECT_TRUE(parse_gpu_listing("No devices were found\n").empty());
}

}  // namespace
}  // namespace runner
