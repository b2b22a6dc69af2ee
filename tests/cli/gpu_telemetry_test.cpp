// GpuTelemetry's attribution with a scripted monitor and clock: a job's
// figures wait for the readings of its whole window, however late they
// come, and for no longer than a bound.
#include "../../src/cli/gpu_telemetry.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "runner/exec/shell_host_ops.h"
#include "support/no_executor_events.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

// A host whose only command is the GPU monitor: what it says is scripted,
// the signals it is sent recorded.
class MonitorHost final : public Executor {
 public:
  explicit MonitorHost(ExecutorEvents& events) : Executor(0, events) {}

  // The monitor prints the reading of GPU `gpu` stamped `at` (host seconds).
  void says(double at, double power_w, const std::string& gpu = "0") {
    report_output(m_monitor, OutputStream::out,
                  fmt::format("{:.6f}, {}, GPU-0a1b{}, {:.3f}, 60, 1000\n", at, gpu, gpu, power_w));
  }
  void dies() { report_exited(m_monitor, JobExit::exited(1)); }
  bool killed() const { return m_killed; }

  void connect() override {}
  void start_task(TaskId task, const std::string&) override { m_monitor = task; }
  void start_task_reading(TaskId task, const std::string&, const std::string&) override {
    m_monitor = task;
  }
  void signal_task(TaskId task, int signal) override {
    m_killed = m_killed || (task == m_monitor && signal == SIGKILL);
  }
  void shutdown() override {}
  bool idle() const override { return true; }
  std::string address() const override { return "localhost"; }
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }
  void poll_fds(std::vector<pollfd>&) override {}
  void step(Clock::time_point) override {}

 private:
  TaskId m_monitor = 0;
  bool m_killed = false;
};

// Host seconds as the runner's clock: the host's clock is not behind.
Clock::time_point at_seconds(double seconds) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
}

class GpuTelemetryTest : public ::testing::Test {
 protected:
  static constexpr std::chrono::milliseconds k_period{200};

  // One host with one slot, of GPU 0.
  static Fleet one_gpu() {
    Fleet fleet;
    fleet.hosts.push_back({"localhost", {"", "localhost", 0, true}, {0}, 1});
    Slot slot;
    slot.params = {{"gpu", "0"}};
    slot.label = "localhost gpu=0";
    fleet.slots.push_back(slot);
    return fleet;
  }

  GpuTelemetryTest() {
    m_job.id = 7;
    m_job.attempt = 2;
    m_job.tasks.push_back(Task{.id = 11, .host = 0, .slots = {0}});
    m_telemetry.attach({&m_host_ops});
    m_telemetry.report_figures_to([this](const JobGpuFigures& job) { m_figures.push_back(job); });
  }

  // The monitor's readings stamped from..to, every period, arriving as
  // they are read.
  void readings(double from, double to, double power_w) {
    for (double at = from; at <= to + 1e-9; at += 0.2) {
      m_now = std::max(m_now, at_seconds(at));
      m_host.says(at, power_w);
    }
  }

  // The job runs from 0 to 1.5 s; readings of 100 W up to 1.0 s came.
  void job_ends_after_readings_at_100_w() {
    m_telemetry.job_launched(m_job);
    m_telemetry.task_started(m_job, m_job.tasks.front());
    readings(0, 1.0, 100);
    m_now = at_seconds(1.5);
    m_telemetry.job_finished(m_job);
  }

  // The job's figures came, of the readings before its end alone.
  void expect_the_figures_of_what_was_read() {
    ASSERT_EQ(m_figures.size(), 1u);
    EXPECT_NEAR(m_figures[0].figures.power_max_w, 100, 1e-6);
    EXPECT_FALSE(m_telemetry.awaiting_figures());
  }

  // The figures of readings every period at 100 W up to 1.0 s, then 300 W,
  // all arrived, over [0, 1.5 s].
  static GpuFigures all_read() {
    std::vector<GpuSample> samples;
    for (int i = 0; i <= 10; ++i)
      samples.push_back({at_seconds(i * 0.2), std::nullopt, i <= 5 ? 100.0 : 300.0, 60, 1000});
    return *figures_between(samples, at_seconds(0), at_seconds(1.5),
                            std::max<Clock::duration>(5 * k_period, 1s));
  }

  Fleet m_fleet = one_gpu();
  testing::NoExecutorEvents m_events;
  MonitorHost m_host{m_events};
  ShellHostOps m_host_ops{m_host};
  Clock::time_point m_now = at_seconds(0);
  GpuTelemetry m_telemetry{m_fleet, k_period, [](const std::string&) {}, [this] { return m_now; }};
  Job m_job;
  std::vector<JobGpuFigures> m_figures;
};

TEST_F(GpuTelemetryTest, AJobsFiguresCountTheReadingsPastItsEndThatComeAfterIt) {
  job_ends_after_readings_at_100_w();
  EXPECT_TRUE(m_figures.empty()) << "no reading at or past its end came yet";
  EXPECT_FALSE(m_host.killed()) << "its monitor reads on until one comes";

  readings(1.2, 2.0, 300);

  ASSERT_EQ(m_figures.size(), 1u);
  EXPECT_EQ(m_figures[0].job, 7);
  EXPECT_EQ(m_figures[0].attempt, 2);
  EXPECT_EQ(m_figures[0].slots, std::vector<int>{0});
  GpuFigures expected = all_read();
  EXPECT_NEAR(m_figures[0].figures.energy_j, expected.energy_j, 1e-6);
  EXPECT_NEAR(m_figures[0].figures.power_max_w, 300, 1e-6);
  EXPECT_TRUE(m_host.killed()) << "the host has no job left";
  EXPECT_FALSE(m_telemetry.awaiting_figures());
}

TEST_F(GpuTelemetryTest, AJobsFiguresComeWithWhatWasReadWhenItsGpuIsReadNoMore) {
  job_ends_after_readings_at_100_w();
  ASSERT_TRUE(m_telemetry.awaiting_figures());
  std::optional<Clock::time_point> due = m_telemetry.deadline();
  ASSERT_TRUE(due);
  EXPECT_GT(*due, m_now);

  // GPU 0 is gone; the monitor reads GPU 1 on.
  for (double at = 1.6; m_figures.empty() && at < 60; at += 0.2) {
    m_now = at_seconds(at);
    m_host.says(at, 300, "1");
    m_telemetry.step(m_now);
  }

  expect_the_figures_of_what_was_read();
  EXPECT_TRUE(m_host.killed());
}

TEST_F(GpuTelemetryTest, AtTheRunsEndAJobsFiguresComeWithWhatWasRead) {
  job_ends_after_readings_at_100_w();

  m_telemetry.finish();

  expect_the_figures_of_what_was_read();
}

TEST_F(GpuTelemetryTest, AJobsFiguresComeAtOnceWhenItsMonitorEnds) {
  job_ends_after_readings_at_100_w();

  m_host.dies();

  expect_the_figures_of_what_was_read();
}

}  // namespace
}  // namespace runner
