#include "runner/exec/gpu_monitor_command.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

using namespace std::chrono_literals;

TEST(GpuMonitorCommand, ReadsNvidiaSmisLine) {
  auto reading = parse_gpu_reading("0, GPU-8f2c1d7e-1a2b-3c4d-5e6f-0123456789ab, 71.23, 45, 1234");
  ASSERT_TRUE(reading);
  EXPECT_EQ(reading->index, "0");
  EXPECT_EQ(reading->uuid, "GPU-8f2c1d7e-1a2b-3c4d-5e6f-0123456789ab");
  EXPECT_DOUBLE_EQ(reading->sample.power_w, 71.23);
  EXPECT_DOUBLE_EQ(reading->sample.util_percent, 45);
  EXPECT_DOUBLE_EQ(reading->sample.memory_mib, 1234);
  EXPECT_FALSE(reading->sample.energy_mj);
}

TEST(GpuMonitorCommand, ReadsNvmlsLineWithItsEnergyCounter) {
  auto reading = parse_gpu_reading("3, GPU-1, 250.500, 100, 80000, 123456789012\r");
  ASSERT_TRUE(reading);
  EXPECT_EQ(reading->index, "3");
  ASSERT_TRUE(reading->sample.energy_mj);
  EXPECT_DOUBLE_EQ(*reading->sample.energy_mj, 123456789012.0);
}

TEST(GpuMonitorCommand, GarbageLinesAreNotReadings) {
  for (const char* line :
       {"", "index, uuid, power.draw [W], utilization.gpu [%], memory.used [MiB]",
        "0, GPU-1, [N/A], 45, 1234", "0, GPU-1, [Not Supported], 45, 1234", "0, GPU-1, 71.2, 45",
        "x, GPU-1, 71.2, 45, 12", "0, GPU 1, 71.2, 45, 12",
        "0, GPU-1, -5, 45, 12", "0, GPU-1, nan, 45, 12", "0, GPU-1, inf, 45, 12",
        "0, GPU-1, 71.2, 145, 12", "0, GPU-1, 71.2, 45, 12, 99, 1", "0, GPU-1, 71.2, 45, 12, x",
        "Failed to initialize NVML: Driver/library version mismatch", "0, GPU-1, 71.2, 45, 1e999"})
    EXPECT_FALSE(parse_gpu_reading(line)) << line;
  EXPECT_TRUE(parse_gpu_reading("0, GPU-1, 71.2, 45, 12")) << "a short line that is whole";
}

TEST(GpuMonitorCommand, TheCommandSaysItsPeriodAndFallsBackOnNvidiaSmi) {
  std::string command = gpu_monitor_command(200ms);
  EXPECT_NE(command.find("-lms 200"), std::string::npos) << command;
  EXPECT_NE(command.find("nvmlDeviceGetTotalEnergyConsumption"), std::string::npos);
  EXPECT_NE(command.find("|| exit 127"), std::string::npos);
  EXPECT_EQ(command.find('\n', command.find("exec nvidia-smi")), std::string::npos);
}

}  // namespace
}  // namespace runner
