#include "runner/probe/gpu_listing.h"

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

TEST(GpuListing, AnIndexIsANumberAndAUuidHasOnlyLettersDigitsAndDashes) {
  std::vector<DetectedGpu> gpus = parse_gpu_listing(
      "GPU 0; rm -rf ~: Card (UUID: GPU-1)\n"
      "GPU 1: Card\r- evil (UUID: GPU-2; touch x)\n"
      "GPU : Card (UUID: GPU-3)\n"
      "GPU 2: Card (UUID: GPU-4\r)\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, "1");
  EXPECT_EQ(gpus[0].name, "Card\r- evil") << "kept as said; escaped where printed";
  EXPECT_EQ(gpus[0].uuid, "") << "not a UUID";
  EXPECT_EQ(gpus[1].index, "2");
  EXPECT_EQ(gpus[1].uuid, "");
}

TEST(GpuUsage, MemoryAndProcessesOfEachGpuByIndex) {
  auto usage = parse_gpu_usage(
      "0, GPU-aaaa, 15\n1, GPU-bbbb, 40536\n---\nGPU-bbbb, 4242\nGPU-bbbb, 4343\n");
  ASSERT_TRUE(usage);
  EXPECT_EQ((*usage)["0"].memory_used_mib, 15);
  EXPECT_EQ((*usage)["0"].processes, 0);
  EXPECT_EQ((*usage)["1"].memory_used_mib, 40536);
  EXPECT_EQ((*usage)["1"].processes, 2);
  EXPECT_FALSE(parse_gpu_usage("NVIDIA-SMI has failed because it couldn't communicate\n"));
  EXPECT_FALSE(parse_gpu_usage("0, GPU-aaaa, 15\n")) << "cut short before the processes";
}

}  // namespace
}  // namespace runner
