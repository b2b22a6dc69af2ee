#include "runner/config/gpu_energy.h"

#include <gtest/gtest.h>

#include <cmath>

namespace runner {
namespace {

using namespace std::chrono_literals;

const Clock::time_point t0{};
constexpr auto k_reach = 500ms;

Clock::time_point at(double seconds) {
  return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

GpuSample sample(double seconds, double watts, double util = 0, double mib = 0,
                 std::optional<double> mj = std::nullopt) {
  return GpuSample{at(seconds), mj, watts, util, mib};
}

// Power every `period` seconds from `from` to `to`, `watts(t)`.
template <typename Watts>
std::vector<GpuSample> sampled(double from, double to, double period, Watts watts) {
  std::vector<GpuSample> samples;
  for (int i = 0; from + i * period <= to + 1e-9; ++i)
    samples.push_back(sample(from + i * period, watts(from + i * period)));
  return samples;
}

TEST(GpuEnergy, ConstantPowerIsPowerTimesTheWindow) {
  auto samples = sampled(0, 10, 0.2, [](double) { return 250.0; });
  auto figures = figures_between(samples, at(2), at(6), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 1000, 1e-6);
  EXPECT_NEAR(figures->power_mean_w, 250, 1e-6);
  EXPECT_NEAR(figures->power_max_w, 250, 1e-6);
  EXPECT_NEAR(figures->seconds, 4, 1e-6);
  EXPECT_EQ(figures->gpus, 1);
}

TEST(GpuEnergy, PowerIsIntegratedAsATrapezoidBetweenSamples) {
  // 0 W at 0 s rising linearly to 100 W at 1 s: 50 J.
  std::vector<GpuSample> samples{sample(0, 0), sample(1, 100)};
  auto figures = figures_between(samples, at(0), at(1), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 50, 1e-9);
  EXPECT_NEAR(figures->power_mean_w, 50, 1e-9);
  EXPECT_NEAR(figures->power_max_w, 100, 1e-9);
  // Half of it: the window is clipped on the line.
  auto half = figures_between(samples, at(0.5), at(1), k_reach);
  ASSERT_TRUE(half);
  EXPECT_NEAR(half->energy_j, 37.5, 1e-9);
  EXPECT_NEAR(half->power_max_w, 100, 1e-9);
  auto first_half = figures_between(samples, at(0), at(0.5), k_reach);
  EXPECT_NEAR(first_half->power_max_w, 50, 1e-9) << "peak of the window, not of the samples";
}

TEST(GpuEnergy, PowerStepsSampledEvery200msMatchTheirIntegralWithinOnePercent) {
  // 100 W and 300 W in turn, a second each, for 20 s: 4000 J; sampled out
  // of step with the changes.
  auto watts = [](double t) { return static_cast<long>(std::floor(t)) % 2 == 0 ? 100.0 : 300.0; };
  auto samples = sampled(-0.93, 21, 0.2, watts);
  auto figures = figures_between(samples, at(0), at(20), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 4000, 40);
  EXPECT_NEAR(figures->power_max_w, 300, 1e-9);
}

TEST(GpuEnergy, TheCounterIsUsedWhereBothSamplesHaveIt) {
  // The power readings say 100 W, but the counter advances 500 J a second:
  // the counter wins.
  std::vector<GpuSample> samples;
  for (int i = 0; i <= 50; ++i)
    samples.push_back(sample(i * 0.2, 100, 0, 0, 1e6 + i * 0.2 * 500'000));
  auto figures = figures_between(samples, at(1), at(9), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 4000, 1e-6);
  EXPECT_NEAR(figures->power_mean_w, 500, 1e-6);
}

TEST(GpuEnergy, BeyondTheSamplesPowerHoldsAsTheCounterSaysIt) {
  // The power readings say 1 W; the counter, 200 W. The window begins 0.3 s
  // before the first sample and ends 0.1 s after the last.
  std::vector<GpuSample> samples;
  for (int i = 0; i <= 10; ++i) samples.push_back(sample(1 + i * 0.2, 1, 0, 0, i * 0.2 * 200'000));
  auto figures = figures_between(samples, at(0.7), at(3.1), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 2.4 * 200, 1e-6);
}

TEST(GpuEnergy, ACounterThatGoesBackIsBridgedByPower) {
  // The driver reloaded between 1 s and 1.2 s: the counter starts again.
  std::vector<GpuSample> samples;
  for (int i = 0; i <= 10; ++i) {
    double t = i * 0.2;
    double counter = t < 1.1 ? 5e9 + t * 200'000 : (t - 1.1) * 200'000;
    samples.push_back(sample(t, 200, 0, 0, counter));
  }
  auto figures = figures_between(samples, at(0), at(2), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 400, 1e-6);
}

TEST(GpuEnergy, ACounterThatGoesBackOrRacesAheadIsNotBelieved) {
  GpuSample before = sample(1, 100, 0, 0, 1e6);
  EXPECT_EQ(counter_refusal(before, sample(1.2, 100, 0, 0, 1e6 + 20'000)), "");
  EXPECT_EQ(counter_refusal(before, sample(1.2, 100)), "") << "no counter to doubt";
  EXPECT_EQ(counter_refusal(sample(1, 100), sample(1.2, 100, 0, 0, 5)), "");
  std::string back = counter_refusal(before, sample(1.2, 100, 0, 0, 999'000));
  EXPECT_NE(back.find("went back"), std::string::npos) << back;
  // 1001 J in 0.2 s is 5005 W: no GPU's.
  std::string ahead = counter_refusal(before, sample(1.2, 100, 0, 0, 1e6 + 1'001'000));
  EXPECT_NE(ahead.find("5005 W"), std::string::npos) << ahead;
  EXPECT_EQ(counter_refusal(before, sample(1.2, 100, 0, 0, 1e6 + 1'000'000)), "") << "5000 W is";
}

TEST(GpuEnergy, ACounterIsKeptAcrossAGapInTheSamples) {
  // The monitor was down from 1 s to 5 s; the counter still says what the
  // GPU took meanwhile.
  std::vector<GpuSample> samples{sample(0, 100, 0, 0, 0), sample(1, 100, 0, 0, 100'000),
                                 sample(5, 100, 0, 0, 1'300'000), sample(6, 100, 0, 0, 1'400'000)};
  auto figures = figures_between(samples, at(0), at(6), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 1400, 1e-6);
  EXPECT_NEAR(figures->seconds, 6, 1e-9);
}

TEST(GpuEnergy, AGpuThatDisappearsCountsOnlyTheTimeItWasSeen) {
  // Seen from 0 s to 3 s at 100 W; the window goes on to 10 s.
  auto samples = sampled(0, 3, 0.2, [](double) { return 100.0; });
  auto figures = figures_between(samples, at(0), at(10), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->seconds, 3.5, 1e-6) << "its last reading holds for the reach";
  EXPECT_NEAR(figures->energy_j, 350, 1e-6);
  EXPECT_NEAR(figures->power_mean_w, 100, 1e-6);
}

TEST(GpuEnergy, PowerReadingsHoldForTheReachAroundAGap) {
  std::vector<GpuSample> samples{sample(0, 100), sample(10, 300)};
  auto figures = figures_between(samples, at(0), at(10), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->seconds, 1, 1e-9);
  EXPECT_NEAR(figures->energy_j, 100 * 0.5 + 300 * 0.5, 1e-9);
}

TEST(GpuEnergy, AWindowNoSampleReachesHasNoFigures) {
  auto samples = sampled(0, 3, 0.2, [](double) { return 100.0; });
  EXPECT_FALSE(figures_between(samples, at(5), at(8), k_reach));
  EXPECT_FALSE(figures_between({}, at(0), at(8), k_reach));
  EXPECT_FALSE(figures_between(samples, at(1), at(1), k_reach)) << "an empty window";
}

TEST(GpuEnergy, AWindowBeforeTheFirstSampleIsReachedByIt) {
  // The job started 0.3 s before the monitor's first line came.
  auto samples = sampled(0.3, 2, 0.2, [](double) { return 100.0; });
  auto figures = figures_between(samples, at(0), at(2), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->energy_j, 200, 1e-6);
}

TEST(GpuEnergy, UtilisationIsTimeWeightedAndMemoryIsItsPeak) {
  std::vector<GpuSample> samples{sample(0, 0, 0, 1000), sample(1, 0, 100, 3000),
                                 sample(2, 0, 100, 2000), sample(3, 0, 100, 2000)};
  auto figures = figures_between(samples, at(0), at(3), k_reach);
  ASSERT_TRUE(figures);
  EXPECT_NEAR(figures->util_mean, (50.0 + 100 + 100) / 3, 1e-9);
  EXPECT_NEAR(figures->memory_max_mib, 3000, 1e-9);
}

TEST(GpuEnergy, CombinedSumsEnergyPowerAndMemoryAndAveragesUtilisation) {
  GpuFigures a{100, 50, 80, 20, 1000, 2, 1};
  GpuFigures b{300, 150, 200, 60, 3000, 2, 1};
  GpuFigures both = combined({a, b});
  EXPECT_DOUBLE_EQ(both.energy_j, 400);
  EXPECT_DOUBLE_EQ(both.power_mean_w, 200);
  EXPECT_DOUBLE_EQ(both.power_max_w, 280);
  EXPECT_DOUBLE_EQ(both.util_mean, 40);
  EXPECT_DOUBLE_EQ(both.memory_max_mib, 4000);
  EXPECT_EQ(both.gpus, 2);
  // A job's ranks combine the same way: two of two GPUs are four GPUs.
  GpuFigures four = combined({both, both});
  EXPECT_EQ(four.gpus, 4);
  EXPECT_DOUBLE_EQ(four.util_mean, 40);
  EXPECT_DOUBLE_EQ(four.energy_j, 800);
}

}  // namespace
}  // namespace runner
