// A run's GPU telemetry: on each host with GPU slots, a monitor
// (gpu_monitor_command) runs over the host's connection from its first
// running job to its last; its readings are kept per GPU while a job there
// may still need them, and a job's figures are those of its slots' GPUs
// (`gpu` index or `gpu_uuid`) from each task's start to the job's end,
// summed over its tasks (gpu_energy.h).
//
// Readings are timed by the host's clock, when it read the GPU, not by
// when they reach the runner (late and in bunches when either side is
// busy). A task's window is turned into the host's time by how far the
// host's clock is behind the runner's: the least difference, over the
// monitor's lines, between a line's arrival and its time (the offset plus
// the quickest a line came). A line whose values no GPU has, or stamped
// more than k_clock_jump ahead of the host's clock, is left out and said
// once per host.
//
// A job's figures are known once a reading at or past its window's end
// has come from each of its GPUs (readings come late when either side is
// busy, and the stretch after the last one would be its power held), or
// once its host's monitor ends, or k_job_gpu_wait after the job ended, or
// at the run's end (finish): they are reported apart from the job's end,
// which they never hold back. A host's monitor reads on, after its last
// job ended, until the figures of its jobs are known.
//
// A monitor never holds a job back. A host without nvidia-smi is not
// monitored again, and said once where GPUs are expected (gpus_expected),
// else only in the debug log; a monitor that ends, or prints nothing for
// k_silence_periods, is stopped and started again after a warning, up to
// k_restarts times in a run, then dropped with a warning.
//
// Threading: none; stepped by the event loop for its deadlines, fed by the
// executors' output as they step.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/gpu_energy.h"
#include "runner/config/hosts.h"
#include "runner/core/pollable.h"
#include "runner/exec/host_ops.h"
#include "runner/sched/job.h"
#include "runner/state/gpu_power_series.h"

namespace runner {

// An ended job's GPU figures: those of the attempt `attempt` of job `job`,
// which held `slots`.
struct JobGpuFigures {
  JobId job = 0;
  int attempt = 1;
  std::vector<int> slots;
  GpuFigures figures;
};

class GpuTelemetry final : public Pollable {
 public:
  // How often each GPU is read.
  static constexpr std::chrono::milliseconds k_default_period{200};
  // A monitor silent for this many periods (and at least two seconds) is hung.
  static constexpr int k_silence_periods = 25;
  // How often a host's monitor is started again in one run.
  static constexpr int k_restarts = 3;
  // A reading stamped this much ahead of what the host's clock said so far
  // is left out: no line comes before it is read.
  static constexpr std::chrono::seconds k_clock_jump{60};

  // `warn` says what goes wrong with a monitor; `clock` times readings and
  // tasks' starts and ends.
  GpuTelemetry(const Fleet& fleet, std::chrono::milliseconds period,
               std::function<void(const std::string&)> warn, ClockSource clock);

  // Each GPU's mean power over stretches of series_stretch() goes to
  // `series` (the state dir's gpu_power.jsonl), until it fails or is full.
  void record_power_to(GpuPowerSeriesWriter* series) { m_series = series; }

  // Where each ended job's figures go, once they are known (see job_finished).
  void report_figures_to(std::function<void(const JobGpuFigures&)> sink) {
    m_figures_sink = std::move(sink);
  }

  // The typed operations on the run's hosts, one per host (Fleet::hosts
  // order); before any job.
  void attach(std::vector<HostOps*> host_ops) { m_host_ops = std::move(host_ops); }

  // Starts the monitors of the job's hosts that have none.
  void job_launched(const Job& job);
  // The task's window starts now.
  void task_started(const Job& job, const Task& task);
  // The job ended now. Its figures go to the sink once they are known
  // (none where none of its slots has a GPU that was read).
  void job_finished(const Job& job);
  // Whether figures of ended jobs are still to come.
  bool awaiting_figures() const;
  // The run ends: the figures still to come, of what was read.
  void finish();

  void poll_fds(std::vector<pollfd>&) override {}
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override;

 private:
  enum class MonitorState { idle, running, absent, dropped };
  struct HostMonitor {
    MonitorState state = MonitorState::idle;
    TaskId command = 0;
    int generation = 0;  // of its monitor: each start is the next
    int jobs = 0;  // running jobs with a task there
    int restarts = 0;
    Clock::time_point heard_at;  // its start, or its last line
    std::optional<Clock::time_point> restart_at;
    std::string partial;  // the start of a line not yet whole
    // How far the host's clock is behind the runner's (see above).
    std::optional<Clock::duration> host_behind;
    bool refusal_said = false;
    std::map<std::string, std::vector<GpuSample>> by_index;
    std::map<std::string, std::string> index_of_uuid;
    // Per GPU, where the stretch of power not yet recorded begins (host time).
    std::map<std::string, Clock::time_point> series_from;
  };

  // A GPU's readings an ended job's figures need: [from, to] on the host's clock.
  struct GpuWindow {
    int host = 0;
    std::string gpu;
    Clock::time_point from;
    Clock::time_point to;
  };
  // An ended job whose figures wait for readings, until `due` at the latest.
  struct AwaitedFigures {
    JobGpuFigures job;
    std::vector<GpuWindow> windows;
    Clock::time_point due;
  };

  // Whether no reading of the window is still to come.
  bool window_read(const GpuWindow& window) const;
  // Gives the figures of the jobs whose readings came, or that are due
  // (all of them with `all`), and lets go of their hosts' readings.
  void settle_figures(bool all = false);
  // Stops the host's monitor if no job there needs it, else drops the
  // readings no job needs any more.
  void release_host(int host);
  bool has_gpu_slots(int host) const;
  // Whether the host is expected to have GPUs: an entry of its says
  // `gpu_monitor: on`, or a slot names a GPU by its `gpu_uuid`, or, on a
  // host reached over SSH, by its `gpu` index (a local `gpu:` may only
  // number the slots of a machine without one).
  bool gpus_expected(int host) const;
  void start_monitor(int host);
  void stop_monitor(int host);
  // What the monitor started as `generation` of the host's said, and its end.
  void monitor_output(int host, int generation, std::string_view bytes);
  void monitor_ended(int host, int generation, const JobExit& exit);
  // Says why the host's monitor is started again, or dropped.
  void restart_later(int host, const std::string& why);
  // Adds a reading of the host's GPU, or leaves it out (refuse) when it is
  // out of time order, or its energy counter is not believable.
  void add_sample(int host, const std::string& gpu, GpuSample sample);
  // Says, once per host, why a line of its monitor is left out.
  void refuse(int host, const std::string& why);
  // The host's time of `at` (the runner's), once a line of its monitor came.
  std::optional<Clock::time_point> host_time_of(int host, Clock::time_point at) const;
  // Readings no running job there, nor an awaited figure, needs any more are dropped.
  void forget_old_readings(int host);
  // The GPU a slot has: its `gpu` index, or the index of its `gpu_uuid`.
  std::optional<std::string> gpu_index_of(int slot) const;
  // Records the GPU's stretches of power that its readings passed; with
  // `all`, the last one too, up to its last reading.
  void record_power(int host, const std::string& gpu, bool all);
  void record_all_power(int host);
  Clock::duration series_stretch() const;
  Clock::duration reach() const;
  Clock::duration silence_limit() const;

  const Fleet& m_fleet;
  std::chrono::milliseconds m_period;
  std::function<void(const std::string&)> m_warn;
  ClockSource m_clock;
  std::vector<HostOps*> m_host_ops;
  std::vector<HostMonitor> m_hosts;
  std::map<TaskId, Clock::time_point> m_task_starts;
  std::vector<AwaitedFigures> m_awaited;
  GpuPowerSeriesWriter* m_series = nullptr;
  std::function<void(const JobGpuFigures&)> m_figures_sink;
};

}  // namespace runner
