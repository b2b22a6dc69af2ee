#include "runner/state/gpu_power_series.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

GpuPowerPoint point(const std::string& gpu, int second, double watts) {
  std::chrono::system_clock::time_point from{std::chrono::seconds(1'700'000'000 + second)};
  return GpuPowerPoint{"node01", gpu, from, from + 5s, watts};
}

TEST(GpuPowerSeries, WhatIsWrittenIsReadBack) {
  testing::TempDir dir;
  {
    GpuPowerSeriesWriter writer(gpu_power_series_path(dir.path()));
    ASSERT_TRUE(writer.append(point("0", 0, 120.5)).ok());
    ASSERT_TRUE(writer.append(point("1", 0, 80)).ok());
    ASSERT_TRUE(writer.append(point("0", 5, 300)).ok());
  }
  {
    GpuPowerSeriesWriter later(gpu_power_series_path(dir.path()));  // a later run appends
    ASSERT_TRUE(later.append(point("0", 10, 99.25)).ok());
  }
  std::vector<GpuPowerPoint> points = read_gpu_power_series(gpu_power_series_path(dir.path()));
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].host, "node01");
  EXPECT_EQ(points[0].gpu, "0");
  EXPECT_EQ(points[0].from, point("0", 0, 0).from);
  EXPECT_EQ(points[0].to, point("0", 0, 0).to);
  EXPECT_DOUBLE_EQ(points[0].watts, 120.5);
  EXPECT_EQ(points[1].gpu, "1");
  EXPECT_DOUBLE_EQ(points[3].watts, 99.25);
}

TEST(GpuPowerSeries, ANameThatIsNotUtf8IsWrittenWithReplacementCharacters) {
  // A GPU's index as a hostile node's nvidia-smi may give it.
  GpuPowerPoint hostile = point("0\xff\xfe", 0, 50);
  std::string line;
  ASSERT_NO_THROW(line = gpu_power_line(hostile));
  std::optional<GpuPowerPoint> read = gpu_power_point(line.substr(0, line.size() - 1));
  ASSERT_TRUE(read.has_value()) << line;
  EXPECT_EQ(read->gpu, "0\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_DOUBLE_EQ(read->watts, 50);
}

TEST(GpuPowerSeries, PastItsLimitNothingMoreIsWrittenAndItSaysSo) {
  testing::TempDir dir;
  GpuPowerSeriesWriter writer(gpu_power_series_path(dir.path()), 300);
  int written = 0;
  Status full;
  for (int i = 0; i < 20; ++i) {
    full = writer.append(point("0", i * 5, 100));
    if (!full.ok()) break;
    ++written;
  }
  EXPECT_GT(written, 0);
  EXPECT_LT(written, 20);
  EXPECT_NE(full.message().find("300 bytes"), std::string::npos) << full.message();
  EXPECT_EQ(read_gpu_power_series(gpu_power_series_path(dir.path())).size(),
            static_cast<std::size_t>(written));
}

TEST(GpuPowerSeries, LinesThatAreNotPointsAreSkipped) {
  testing::TempDir dir;
  dir.write("gpu_power.jsonl",
            "{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":1,\"to_ms\":2,\"w\":3}\n"
            "not json\n{\"host\":\"a\"}\n{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":1,\"to_ms\":"
            "2,\"w\":\"x\"}\n{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":1,\"to_ms\":2,\"w\":-1}\n"
            "{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":1,\"to_ms\":2,\"w\":4}");
  std::vector<GpuPowerPoint> points = read_gpu_power_series(dir.file("gpu_power.jsonl"));
  ASSERT_EQ(points.size(), 1u) << "the last line is cut";
  EXPECT_DOUBLE_EQ(points[0].watts, 3);
  EXPECT_TRUE(read_gpu_power_series(dir.file("none.jsonl")).empty());
}

TEST(GpuPowerSeries, TimesNoRunCanHaveWrittenAreSkipped) {
  testing::TempDir dir;
  dir.write("gpu_power.jsonl",
            "{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":-5,\"to_ms\":2,\"w\":1}\n"
            "{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":1,\"to_ms\":9223372036854775807,"
            "\"w\":2}\n"
            "{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":5,\"to_ms\":4,\"w\":3}\n"
            "{\"host\":\"a\",\"gpu\":\"0\",\"from_ms\":5,\"to_ms\":6,\"w\":4}\n");
  std::vector<GpuPowerPoint> points = read_gpu_power_series(dir.file("gpu_power.jsonl"));
  ASSERT_EQ(points.size(), 1u);
  EXPECT_DOUBLE_EQ(points[0].watts, 4);
}

TEST(GpuPowerSeries, PowerNoGpuDrawsIsSkipped) {
  // 1e307 W would be written back as null once rounded to hundredths.
  std::optional<GpuPowerPoint> absurd =
      gpu_power_point(R"({"host":"a","gpu":"0","from_ms":1,"to_ms":2,"w":1e307})");
  EXPECT_FALSE(absurd.has_value());
  std::optional<GpuPowerPoint> big =
      gpu_power_point(R"({"host":"a","gpu":"0","from_ms":1,"to_ms":2,"w":1500.25})");
  ASSERT_TRUE(big.has_value());
  EXPECT_DOUBLE_EQ(big->watts, 1500.25);
}

}  // namespace
}  // namespace runner
