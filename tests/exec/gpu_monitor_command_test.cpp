#include "runner/exec/gpu_monitor_command.h"

#include <gtest/gtest.h>

namespace runner {
namespace {

using namespace std::chrono_literals;

// Seconds since the host clock's epoch of a sample.
double host_seconds(const GpuSample& sample) {
  return std::chrono::duration<double>(sample.at.time_since_epoch()).count();
}

TEST(GpuMonitorCommand, ReadsNvidiaSmisLineWithItsTimestamp) {
  auto reading = parse_gpu_reading(
      "2026/12/07 14:02:55.123, 0, GPU-8f2c1d7e-1a2b-3c4d-5e6f-0123456789ab, 71.23, 45, 1234");
  ASSERT_TRUE(reading);
  EXPECT_EQ(reading->index, "0");
  EXPECT_EQ(reading->uuid, "GPU-8f2c1d7e-1a2b-3c4d-5e6f-0123456789ab");
  EXPECT_NEAR(host_seconds(reading->sample), 1796652175.123, 1e-6) << "read as UTC";
  EXPECT_DOUBLE_EQ(reading->sample.power_w, 71.23);
  EXPECT_DOUBLE_EQ(reading->sample.util_percent, 45);
  EXPECT_DOUBLE_EQ(reading->sample.memory_mib, 1234);
  EXPECT_FALSE(reading->sample.energy_mj);
}

TEST(GpuMonitorCommand, ReadsNvmlsLineWithItsClockAndEnergyCounter) {
  auto reading =
      parse_gpu_reading("1796652175.250001, 3, GPU-1, 250.500, 100, 80000, 123456789012\r");
  ASSERT_TRUE(reading);
  EXPECT_EQ(reading->index, "3");
  EXPECT_NEAR(host_seconds(reading->sample), 1796652175.250001, 1e-6);
  ASSERT_TRUE(reading->sample.energy_mj);
  EXPECT_DOUBLE_EQ(*reading->sample.energy_mj, 123456789012.0);
}

TEST(GpuMonitorCommand, GarbageLinesAreNotReadings) {
  for (const char* line :
       {"", "timestamp, index, uuid, power.draw [W], utilization.gpu [%], memory.used [MiB]",
        "5.0, 0, GPU-1, [N/A], 45, 1234", "5.0, 0, GPU-1, [Not Supported], 45, 1234",
        "5.0, 0, GPU-1, 71.2, 45", "5.0, x, GPU-1, 71.2, 45, 12", "5.0, 0, GPU 1, 71.2, 45, 12",
        "5.0, 0, GPU-1, 71.2, 145, 12", "5.0, 0, GPU-1, 71.2, 45, 12, 99, 1",
        "5.0, 0, GPU-1, 71.2, 45, 12, x", "x, 0, GPU-1, 71.2, 45, 12",
        "2026/13/07 14:02:55.123, 0, GPU-1, 71.2, 45, 12", "0, GPU-1, 71.2, 45, 12",
        "Failed to initialize NVML: Driver/library version mismatch",
        "5.0, 0, GPU-1, 71.2, 45, 1e999", "17966252175.25, 0, GPU-1, 71.2, 45, 12",
        "9999/12/31 23:59:59.999, 0, GPU-1, 71.2, 45, 12"}) {
    GpuLine read = parse_gpu_line(line);
    EXPECT_FALSE(read.reading) << line;
    EXPECT_EQ(read.refused, "") << line;
  }
  EXPECT_TRUE(parse_gpu_reading("5.0, 0, GPU-1, 71.2, 45, 12")) << "a short line that is whole";
}

TEST(GpuMonitorCommand, ReadingsNoGpuGivesAreRefusedWithTheReason) {
  for (auto [line, why] : std::initializer_list<std::pair<const char*, const char*>>{
           {"5.0, 64, GPU-1, 71.2, 45, 12", "GPU index 64"},
           {"5.0, 99999, GPU-1, 71.2, 45, 12", "GPU index 99999"},
           {"5.0, 0, GPU-1, nan, 45, 12", "power nan W"},
           {"5.0, 0, GPU-1, -5, 45, 12", "power -5 W"},
           {"5.0, 0, GPU-1, inf, 45, 12", "power inf W"},
           {"5.0, 0, GPU-1, 5000.5, 45, 12", "power 5000.5 W"}}) {
    GpuLine read = parse_gpu_line(line);
    EXPECT_FALSE(read.reading) << line;
    EXPECT_NE(read.refused.find(why), std::string::npos) << line << ": " << read.refused;
  }
  EXPECT_TRUE(parse_gpu_reading("5.0, 63, GPU-1, 5000, 45, 12"))
      << "the last index, the most power";
}

TEST(GpuMonitorCommand, TheCommandSaysItsPeriodAndFallsBackOnNvidiaSmi) {
  std::string command = gpu_monitor_command(200ms);
  EXPECT_NE(command.find("-lms 200"), std::string::npos) << command;
  EXPECT_NE(command.find("--query-gpu=timestamp,index,uuid,"), std::string::npos) << command;
  EXPECT_NE(command.find("nvmlDeviceGetTotalEnergyConsumption"), std::string::npos);
  EXPECT_NE(command.find("|| exit 127"), std::string::npos);
  EXPECT_EQ(command.find('\n', command.find("exec nvidia-smi")), std::string::npos);
}

}  // namespace
}  // namespace runner
