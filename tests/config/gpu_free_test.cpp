#include "runner/config/gpu_free.h"

#include <gtest/gtest.h>

#include "runner/config/config_error.h"
#include "runner/config/hosts.h"
#include "support/config_failure.h"
#include "support/value_of.h"

namespace runner {
namespace {

TEST(GpuFree, ReadsMemoryLimitsProcessesAndBoth) {
  EXPECT_EQ(parse_gpu_free("memory < 1GiB")->memory_below_mib, 1024);
  EXPECT_EQ(parse_gpu_free("memory<512 MiB")->memory_below_mib, 512);
  EXPECT_EQ(parse_gpu_free("memory < 2GB")->memory_below_mib, 1907);
  EXPECT_EQ(parse_gpu_free("memory < 300")->memory_below_mib, 300);
  Result<GpuFreeRule> both = parse_gpu_free("no-processes and memory < 0.5GiB");
  ASSERT_TRUE(both);
  EXPECT_TRUE(both->no_processes);
  EXPECT_EQ(both->memory_below_mib, 512);
  for (const char* bad : {"", "memory > 1GiB", "memory < lots", "idle", "no-processes and"}) {
    Result<GpuFreeRule> rule = parse_gpu_free(bad);
    ASSERT_FALSE(rule) << bad;
    EXPECT_NE(rule.status().message().find("write `memory < 1GiB`"), std::string::npos)
        << rule.status().message();
  }
}

TEST(GpuFree, AnAmountNoGpuHoldsIsRefusedNotCutToSomeNumber) {
  for (const char* bad : {"memory <  77777777777777777777777777777777777777777.5",
                          "memory < 1e40 GiB", "memory < inf", "memory < nan"}) {
    Result<GpuFreeRule> rule = parse_gpu_free(bad);
    ASSERT_FALSE(rule) << bad;
    EXPECT_NE(rule.status().message().find("is not an amount of memory"), std::string::npos)
        << rule.status().message();
  }
  EXPECT_EQ(parse_gpu_free("memory < 1048576 GiB")->memory_below_mib, 1073741824);
}

TEST(GpuFree, SaysWhatHoldsABusyGpu) {
  GpuFreeRule rule = *parse_gpu_free("no-processes and memory < 1GiB");
  EXPECT_FALSE(gpu_busy_reason(rule, {1023, 0}));
  EXPECT_EQ(gpu_busy_reason(rule, {1024, 0}), "1.0 GiB in use");
  EXPECT_EQ(gpu_busy_reason(rule, {10, 2}), "2 processes");
  EXPECT_EQ(gpu_busy_reason(rule, {2048, 1}), "2.0 GiB in use, 1 process");
}

TEST(GpuFree, IsAnEntrysConditionNotASlotParameter) {
  Fleet fleet = testing::value_of(parse_hosts(
      "- hostname: a\n  gpu: [0, 1]\n  gpu_free: memory < 1GiB\n- hostname: b\n  gpu: 0\n",
      "hosts.yaml"));
  ASSERT_EQ(fleet.slots.size(), 3u);
  ASSERT_TRUE(fleet.slots[1].gpu_free);
  EXPECT_EQ(fleet.slots[1].gpu_free->text, "memory < 1GiB");
  EXPECT_EQ(fleet.slots[1].params, (Params{{"gpu", "1"}}));
  EXPECT_EQ(fleet.slots[1].label, "a gpu=1");
  EXPECT_FALSE(fleet.slots[2].gpu_free);
}

TEST(GpuFree, ABadConditionNamesItsLine) {
  {
    ConfigError error = testing::failure_of(
        parse_hosts("- hostname: a\n  gpu: 0\n  gpu_free: busy\n", "hosts.yaml"));
    EXPECT_NE(std::string(error.what()).find("hosts.yaml:3"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("`busy` is not a condition"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace runner
