// GPU telemetry with the real binary and a fake nvidia-smi that replays
// scripted power: a job's energy in `runner results` matches the integral
// of the script over the job's start and end as the journal has them
// within 1 %; two jobs on
// two GPUs of one host get each their own GPU's; a host without nvidia-smi
// is said once and its jobs run; a monitor that dies or hangs is started
// again; over sshd as locally.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/fake_nvidia_smi.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

// How far a job's energy may be from the script's integral.
constexpr double k_tolerance = 0.01;

// Seconds since the epoch of a journal record's "time".
double journal_seconds(const std::string& time) {
  struct tm parts {};
  int ms = 0;
  sscanf(time.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &parts.tm_year, &parts.tm_mon, &parts.tm_mday,
         &parts.tm_hour, &parts.tm_min, &parts.tm_sec, &ms);
  parts.tm_year -= 1900;
  parts.tm_mon -= 1;
  return static_cast<double>(timegm(&parts)) + ms / 1000.0;
}

// Each task's time as the runner saw it, by job id and rank: from its
// job_pgid to its job's job_end (seconds since the epoch).
struct Window {
  double from = 0;
  double to = 0;
};
std::map<std::pair<int, int>, Window> journal_windows(const testing::TempDir& dir) {
  std::map<std::pair<int, int>, Window> windows;
  std::istringstream lines(dir.read("queue.runner/journal.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    std::string event = record.value("event", "");
    if (event == "job_pgid")
      windows[{record["job"].get<int>(), record.value("rank", 0)}].from =
          journal_seconds(record["time"]);
    if (event == "job_end")
      for (auto& [task, window] : windows)
        if (task.first == record["job"].get<int>()) window.to = journal_seconds(record["time"]);
  }
  return windows;
}

// The scripted GPU 0's energy over the task of the job of `row`, rank `rank`.
double scripted_joules_of(const testing::TempDir& dir, const nlohmann::json& row, int rank = 0) {
  Window window = journal_windows(dir).at({row["id"].get<int>(), rank});
  return testing::scripted_gpu0_joules(window.from, window.to);
}

// `runner results --format jsonl`'s rows, by the job's `gpu` parameter.
std::map<std::string, nlohmann::json> results_by_gpu(const testing::TempDir& dir) {
  testing::ProcessResult results =
      testing::run_process(testing::runner_spec({"results", "--format", "jsonl"}, dir.path()));
  EXPECT_EQ(results.status, 0) << results.err;
  std::map<std::string, nlohmann::json> rows;
  std::istringstream lines(results.out);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json row = nlohmann::json::parse(line);
    rows[row["slot"].get<std::string>()] = row;
  }
  return rows;
}

// A queue entry whose job takes `seconds`.
std::string sleeping_job(int seconds = 3) {
  return "- command: sleep " + std::to_string(seconds) + "\n";
}

void expect_step_energy(const nlohmann::json& row, const testing::TempDir& dir) {
  ASSERT_TRUE(row.contains("gpu_energy_j")) << row.dump();
  ASSERT_TRUE(row["gpu_energy_j"].is_number()) << row.dump();
  double expected = scripted_joules_of(dir, row);
  EXPECT_NEAR(row["gpu_energy_j"].get<double>(), expected, expected * k_tolerance) << row.dump();
  EXPECT_NEAR(row["gpu_power_max_w"].get<double>(), 300, 1e-6) << row.dump();
  EXPECT_NEAR(row["gpu_util_mean"].get<double>(), 60, 1e-6) << row.dump();
  EXPECT_NEAR(row["gpu_mem_max_mib"].get<double>(), 1000, 1e-6) << row.dump();
}

testing::ProcessSpec local_run(const testing::TempDir& dir, const std::string& hosts,
                               const std::string& queue) {
  dir.write("hosts.yaml", hosts);
  dir.write("queue.yaml", queue);
  testing::ProcessSpec spec =
      testing::runner_spec({"queue", "--no-status", "--gpu-monitor-period", "100ms"}, dir.path());
  spec.env["PATH"] = dir.file("bin") + ":/usr/bin:/bin";
  spec.timeout = 60s;
  return spec;
}

TEST(GpuTelemetryRun, TwoJobsOnTwoGpusOfAHostGetEachTheirGpusFigures) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  testing::ProcessResult run = testing::run_process(
      local_run(dir, "- hostname: localhost\n  gpu: [0, 1]\n",
                sleeping_job() + "  n: [1, 2]\n"));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err.find("monitor"), std::string::npos) << run.err;
  auto rows = results_by_gpu(dir);
  ASSERT_EQ(rows.size(), 2u);
  expect_step_energy(rows["localhost gpu=0"], dir);
  const nlohmann::json& other = rows["localhost gpu=1"];
  Window window = journal_windows(dir).at({other["id"].get<int>(), 0});
  double seconds = window.to - window.from;
  EXPECT_NEAR(other["gpu_energy_j"].get<double>(), 50 * seconds, 50 * seconds * k_tolerance)
      << other.dump();
  EXPECT_NEAR(other["gpu_power_mean_w"].get<double>(), 50, 0.5) << other.dump();
  EXPECT_NEAR(other["gpu_mem_max_mib"].get<double>(), 2000, 1e-6) << other.dump();
  std::string journal = dir.read("queue.runner/journal.jsonl");
  EXPECT_NE(journal.find("\"gpu\":{\"energy_j\":"), std::string::npos) << journal;
}

TEST(GpuTelemetryRun, EachGpusPowerOverTimeIsRecordedAndDrawnInTheReport) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  testing::ProcessSpec spec =
      local_run(dir, "- hostname: localhost\n  gpu: [0, 1]\n", sleeping_job() + "  n: [1, 2]\n");
  spec.args.back() = "20ms";  // a stretch of a second
  testing::ProcessResult run = testing::run_process(spec);
  ASSERT_EQ(run.status, 0) << run.err;
  std::map<std::string, int> stretches;
  std::istringstream lines(dir.read("queue.runner/gpu_power.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json point = nlohmann::json::parse(line);
    ++stretches[point["gpu"].get<std::string>()];
    if (point["gpu"] == "1") EXPECT_NEAR(point["w"].get<double>(), 50, 1e-6) << line;
    if (point["gpu"] == "0") {
      double from = point["from_ms"].get<double>() / 1000, to = point["to_ms"].get<double>() / 1000;
      EXPECT_LE(to - from, 1.001) << line;
      EXPECT_NEAR(point["w"].get<double>(), testing::scripted_gpu0_joules(from, to) / (to - from),
                  2)
          << line;
    }
  }
  EXPECT_GE(stretches["0"], 3) << "a 3 s job in stretches of a second";
  EXPECT_GE(stretches["1"], 3);
  testing::ProcessResult report =
      testing::run_process(testing::runner_spec({"report", "-o", "-"}, dir.path()));
  ASSERT_EQ(report.status, 0) << report.err;
  for (const auto& [gpu, count] : stretches)
    EXPECT_NE(report.out.find("data-gpu=\"localhost:" + gpu + "\" data-points=\"" +
                              std::to_string(count) + "\""),
              std::string::npos)
        << gpu << ": " << count;
}

TEST(GpuTelemetryRun, AHostWithoutNvidiaSmiIsSaidOnceAndItsJobsRun) {
  testing::TempDir dir;
  testing::ProcessResult run =
      testing::run_process(local_run(dir, "- hostname: localhost\n  gpu: [0]\n  gpu_monitor: on\n",
                                     "- command: sleep 1; echo ran <<n>>\n  n: [1, 2]\n"));
  ASSERT_EQ(run.status, 0) << run.err;
  std::string said = "localhost: no nvidia-smi; its GPUs are not monitored";
  ASSERT_NE(run.err.find(said), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(said), run.err.rfind(said)) << "said once: " << run.err;
  testing::ProcessResult results =
      testing::run_process(testing::runner_spec({"results"}, dir.path()));
  EXPECT_EQ(results.out.find("gpu_energy_j"), std::string::npos) << results.out;
}

TEST(GpuTelemetryRun, ALocalGpuIndexWithoutNvidiaSmiIsSaidOnlyInTheDebugLog) {
  testing::TempDir dir;
  std::string said = "localhost: no nvidia-smi; its GPUs are not monitored";
  testing::ProcessResult quiet =
      testing::run_process(local_run(dir, "- hostname: localhost\n  gpu: [0, 1]\n", "- sleep 1\n"));
  ASSERT_EQ(quiet.status, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find(said), std::string::npos) << quiet.err;
  testing::ProcessSpec verbose =
      local_run(dir, "- hostname: localhost\n  gpu: [0, 1]\n", "- sleep 1\n");
  verbose.args.push_back("-v");
  testing::ProcessResult told = testing::run_process(verbose);
  ASSERT_EQ(told.status, 0) << told.err;
  EXPECT_NE(told.err.find(said), std::string::npos) << told.err;
  EXPECT_EQ(told.err.find("warning: " + said), std::string::npos) << told.err;
}

TEST(GpuTelemetryRun, GpuMonitorOffOrNoGpuMonitorReadsNothing) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  testing::ProcessResult off = testing::run_process(local_run(
      dir, "- hostname: localhost\n  gpu: [0]\n  gpu_monitor: off\n", "- echo one\n"));
  ASSERT_EQ(off.status, 0) << off.err;
  testing::ProcessSpec flag = local_run(dir, "- hostname: localhost\n  gpu: [0]\n", "- echo two\n");
  flag.args.push_back("--no-gpu-monitor");
  testing::ProcessResult unmonitored = testing::run_process(flag);
  ASSERT_EQ(unmonitored.status, 0) << unmonitored.err;
  EXPECT_EQ(dir.read("queue.runner/journal.jsonl").find("\"gpu\":{"), std::string::npos);
}

TEST(GpuTelemetryRun, LinesNoGpuGivesAreLeftOutAndSaidOnce) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  testing::ProcessSpec spec = local_run(dir, "- hostname: localhost\n  gpu: [0]\n", sleeping_job());
  spec.env["FAKE_GPU_HOSTILE"] = "1";
  testing::ProcessResult run = testing::run_process(spec);
  ASSERT_EQ(run.status, 0) << run.err;
  std::string said = "localhost: its GPU monitor said what no GPU does (GPU index 99 is beyond";
  ASSERT_NE(run.err.find(said), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("no GPU does"), run.err.rfind("no GPU does")) << "said once: " << run.err;
  expect_step_energy(results_by_gpu(dir)["localhost gpu=0"], dir);
}

void expect_restarted(const std::string& fault, const std::string& said) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  testing::ProcessSpec spec =
      local_run(dir, "- hostname: localhost\n  gpu: [0]\n",
                sleeping_job(6));
  spec.env["FAKE_GPU_FAULT"] = fault;
  spec.env["FAKE_GPU_FAULT_DONE"] = dir.file("fault-done");
  testing::ProcessResult run = testing::run_process(spec);
  ASSERT_EQ(run.status, 0) << run.err;
  std::size_t warning = run.err.find("runner: warning: localhost: " + said);
  ASSERT_NE(warning, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("; starting it again\n", warning),
            run.err.find('\n', warning) - std::string("; starting it again").size())
      << run.err;
  auto rows = results_by_gpu(dir);
  ASSERT_TRUE(rows["localhost gpu=0"]["gpu_energy_j"].is_number()) << rows["localhost gpu=0"];
  EXPECT_GT(rows["localhost gpu=0"]["gpu_energy_j"].get<double>(), 100);
}

TEST(GpuTelemetryRun, AMonitorThatDiesIsStartedAgain) {
  expect_restarted("die", "its GPU monitor ended (exit 1)");
}

TEST(GpuTelemetryRun, AMonitorThatHangsIsStoppedAndStartedAgain) {
  expect_restarted("hang", "its GPU monitor said nothing for");
}

// A libnvidia-ml.so.1 of one GPU whose energy counter advances as GPU 0 of
// the fake nvidia-smi draws (testing::scripted_gpu0_watts), while it says it draws 1 W: a
// job's energy that matches the script is the counter's.
constexpr const char* k_fake_nvml = R"(#include <math.h>
#include <string.h>
#include <time.h>
struct use { unsigned gpu, memory; };
struct memory { unsigned long long total, free, used; };
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}
int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *count) { *count = 1; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **handle) { *handle = (void *)1; return 0; }
int nvmlDeviceGetUUID(void *h, char *uuid, unsigned size) { strncpy(uuid, "GPU-cccc-2222", size); return 0; }
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) { *mw = 1000; return 0; }
int nvmlDeviceGetUtilizationRates(void *h, struct use *u) { u->gpu = 70; u->memory = 5; return 0; }
int nvmlDeviceGetMemoryInfo(void *h, struct memory *m) {
  m->total = 80ull << 30; m->used = 3000ull << 20; m->free = m->total - m->used; return 0;
}
int nvmlDeviceGetTotalEnergyConsumption(void *h, unsigned long long *mj) {
  double t = now() - 1.7e9, second = floor(t), part = t - second;
  double rest = part - 0.5;
  double joules = 200 * second +
                  (part < 0.5 ? 100 * part + 200 * part * part : 100 + 300 * rest - 200 * rest * rest);
  *mj = (unsigned long long)(joules * 1000);
  return 0;
}
)";

TEST(GpuTelemetryRun, WhereNvmlIsItsEnergyCounterIsRead) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  dir.write("nvml.c", k_fake_nvml);
  std::filesystem::create_directories(dir.file("lib"));
  testing::ProcessResult built = testing::run_process(testing::ProcessSpec{
      {"cc", "-shared", "-fPIC", "-o", dir.file("lib/libnvidia-ml.so.1"), dir.file("nvml.c"),
       "-lm"},
      dir.path()});
  ASSERT_EQ(built.status, 0) << "a C compiler builds the fake NVML: " << built.err;
  testing::ProcessSpec spec = local_run(dir, "- hostname: localhost\n  gpu: [0]\n", sleeping_job());
  spec.env["LD_LIBRARY_PATH"] = dir.file("lib");
  testing::ProcessResult run = testing::run_process(spec);
  ASSERT_EQ(run.status, 0) << run.err;
  auto rows = results_by_gpu(dir);
  const nlohmann::json& row = rows["localhost gpu=0"];
  ASSERT_TRUE(row["gpu_energy_j"].is_number()) << row.dump();
  double expected = scripted_joules_of(dir, row);
  EXPECT_NEAR(row["gpu_energy_j"].get<double>(), expected, expected * k_tolerance) << row.dump();
  EXPECT_NEAR(row["gpu_power_max_w"].get<double>(), 1, 1e-6) << "NVML's power, not nvidia-smi's";
  EXPECT_NEAR(row["gpu_util_mean"].get<double>(), 70, 1e-6) << row.dump();
  EXPECT_NEAR(row["gpu_mem_max_mib"].get<double>(), 3000, 1e-6) << row.dump();
}

// Starts `count` sshd hosts whose sessions find the fake nvidia-smi; false
// (the test skipped, or failed under CI) when this machine has no sshd.
bool start_fleet(testing::LoopbackFleet& fleet, const testing::TempDir& dir, int count) {
  testing::SshdOptions options;
  options.session_environment = {"PATH=" + dir.file("bin") + ":/usr/bin:/bin"};
  if (fleet.start(count, options)) return true;
  if (testing::sshd_required()) ADD_FAILURE() << "sshd is missing but CI=true requires it";
  return false;
}

TEST(GpuTelemetryRun, OverSshAJobsEnergyMatchesTheScript) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  testing::LoopbackFleet fleet(dir);
  if (!start_fleet(fleet, dir, 1)) GTEST_SKIP() << "no sshd on this machine";
  dir.write("hosts.yaml", "- hostname: " + fleet.name(0) + "\n  gpu: [0]\n");
  dir.write("queue.yaml", sleeping_job());
  testing::ProcessResult run = testing::run_process(
      fleet.runner({"queue", "--no-status", "--gpu-monitor-period", "100ms"}));
  ASSERT_EQ(run.status, 0) << run.err;
  auto rows = results_by_gpu(dir);
  ASSERT_EQ(rows.size(), 1u);
  expect_step_energy(rows.begin()->second, dir);
}

TEST(GpuTelemetryRun, ARemoteHostNamingAGpuWithoutNvidiaSmiIsSaid) {
  testing::TempDir dir;  // no fake nvidia-smi in its bin/
  testing::LoopbackFleet fleet(dir);
  if (!start_fleet(fleet, dir, 1)) GTEST_SKIP() << "no sshd on this machine";
  dir.write("hosts.yaml", "- hostname: " + fleet.name(0) + "\n  gpu: [0]\n");
  dir.write("queue.yaml", "- sleep 1\n");
  testing::ProcessResult run = testing::run_process(fleet.runner({"queue", "--no-status"}));
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(
      run.err.find("warning: " + fleet.name(0) + ": no nvidia-smi; its GPUs are not monitored"),
      std::string::npos)
      << run.err;
}

TEST(GpuTelemetryRun, AJobOnTwoNodesSumsItsRanksGpus) {
  testing::TempDir dir;
  testing::write_fake_nvidia_smi(dir);
  testing::LoopbackFleet fleet(dir);
  if (!start_fleet(fleet, dir, 2)) GTEST_SKIP() << "no sshd on this machine";
  dir.write("hosts.yaml", "- hostname: [" + fleet.name(0) + ", " + fleet.name(1) +
                              "]\n  gpu: [0]\n");
  dir.write("queue.yaml", sleeping_job() + "  nodes: 2\n");
  testing::ProcessResult run = testing::run_process(
      fleet.runner({"queue", "--no-status", "--gpu-monitor-period", "100ms"}));
  ASSERT_EQ(run.status, 0) << run.err;
  auto rows = results_by_gpu(dir);
  ASSERT_EQ(rows.size(), 1u);
  const nlohmann::json& row = rows.begin()->second;
  ASSERT_TRUE(row["gpu_energy_j"].is_number()) << row.dump();
  // Each rank from its start to the job's end.
  double expected = scripted_joules_of(dir, row, 0) + scripted_joules_of(dir, row, 1);
  EXPECT_NEAR(row["gpu_energy_j"].get<double>(), expected, expected * k_tolerance) << row.dump();
  EXPECT_NEAR(row["gpu_mem_max_mib"].get<double>(), 2000, 1e-6) << "two GPUs' " << row.dump();
}

}  // namespace
}  // namespace runner
