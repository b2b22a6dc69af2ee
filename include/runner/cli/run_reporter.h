// Shows a run: job output to the terminal (prefixed per slot) and to each
// job's log file, the status line, and what the end-of-run summary needs.
// A write that fails is said on the terminal: the journal's once until it
// can be written again (no job starts meanwhile: the run log's sync fails),
// each log's once; jobs whose logs lost output, and jobs whose outputs
// could not be written here, are named in the summary.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runner/sched/run_observer.h"
#include "runner/state/job_log.h"
#include "runner/state/run_log.h"
#include "runner/ui/console.h"
#include "runner/ui/status_line.h"
#include "runner/ui/summary.h"

namespace runner {

class GpuTelemetry;
struct JobGpuFigures;

class RunReporter final : public RunObserver, public RunLogListener {
 public:
  RunReporter(const Fleet& fleet, Console& console, JobLogs& logs);

  void host_ready(const Host& host) override;
  void host_failed(const Host& host, const Status& error) override;
  void host_reconnecting(const Host& host, const Status& error, Clock::duration wait) override;
  void job_launched(const Job& job) override;
  void task_started(const Job& job, const Task& task) override;
  void task_output(const Job& job, const Task& task, OutputStream stream,
                   std::string_view bytes) override;
  void job_finished(const Job& job, const JobExit& exit, Clock::duration took) override;
  void service_ready(const Job& job, Clock::duration waited, const Params& variables) override;
  void outputs_collected(JobId job, int attempt, std::optional<int> rank, const std::string& into,
                         const FetchedFiles& fetched) override;
  void notice(const std::string& message) override;
  void warning(const std::string& message) override;

  void journal_failing(const Status& why) override;
  void journal_writable_again() override;
  void journal_not_sealed(const Status& why) override;

  // Writes the job output buffered for the logs (when the loop goes idle).
  void flush_logs();

  const std::vector<FinishedJob>& finished() const { return m_finished; }
  // Whether some job's log misses output that could not be written.
  bool logs_incomplete() const { return !m_incomplete_logs.empty(); }
  // Whether some job's outputs came back but could not be written here.
  bool outputs_lost() const { return !m_lost_outputs.empty(); }
  const std::vector<std::string>& failed_hosts() const { return m_failed_hosts; }
  // Each slot's busy time and job count so far, in Fleet::slots order.
  const std::vector<SlotUsage>& slot_usage() const { return m_slot_usage; }
  // Also keeps `status` (may be null) up to date.
  void set_status_line(StatusLine* status) { m_status = status; }
  // Told of jobs' starts and ends.
  void set_gpu_telemetry(GpuTelemetry* telemetry) { m_gpu_telemetry = telemetry; }
  // A job's GPU figures, once read: their energy counts in its slots' usage.
  void gpu_figures_read(const JobGpuFigures& job);

 private:
  // Says each failure to write a log once.
  void log_written(JobId job, const Status& status);

  const Fleet& m_fleet;
  Console& m_console;
  JobLogs& m_logs;
  std::vector<FinishedJob> m_finished;
  std::vector<std::string> m_failed_hosts;
  std::vector<SlotUsage> m_slot_usage;
  StatusLine* m_status = nullptr;
  GpuTelemetry* m_gpu_telemetry = nullptr;
  std::set<std::string> m_log_failures_said;
  std::map<JobId, std::string> m_incomplete_logs;  // why each is incomplete
  std::map<JobId, std::string> m_lost_outputs;     // what of each's outputs was lost, and why
};

}  // namespace runner
