// The run's journal as the scheduler writes it: a call for each thing it
// decides (a job launched, a task's process group, a job's end, a host
// failed, a service ready, outputs brought back, a job's GPU figures), and
// sync(), which makes all of it durable. The scheduler starts nothing
// before sync() is ok. JournalRunLog writes to the run's Journal, seals its
// live file past its limit and has its checkpoint brought up to date.
//
// Threading: none.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/status.h"
#include "runner/state/journal.h"

namespace runner {

// How much journal a run writes between two of its checkpoints: a reading
// during the run reads at most about this much past one.
constexpr std::uint64_t k_checkpoint_every_bytes = 1u << 20;

// What the scheduler writes. A record that cannot be written now (a full
// disk) waits and is written before the next one; sync() says so.
class RunLog {
 public:
  virtual ~RunLog() = default;
  // A job out of the queue file ahead of need: it waits for slots, and a
  // run that dies before it starts leaves it to --resume.
  virtual void record_taken_ahead(JobTakenAheadRecord record) = 0;
  // The job has its slots; nothing of it starts before sync() is ok.
  virtual void record_launch(JobStartRecord record) = 0;
  // `rank`: of a job that spans hosts.
  virtual void record_process_group(JobId job, const ProcessGroup& group,
                                    std::optional<int> rank) = 0;
  // `rerun`: the job goes back to the queue and will start again.
  virtual void record_end(JobId job, const JobExit& exit, std::chrono::milliseconds duration,
                          bool rerun, std::optional<int> failed_rank) = 0;
  virtual void record_host_failed(std::string_view host, std::string_view message) = 0;
  virtual void record_service_ready(JobId job, std::chrono::milliseconds waited,
                                    const Params& variables) = 0;
  // One attempt of a job's `outputs:` (one rank's) brought back into `dir`.
  virtual void record_outputs(JobId job, int attempt, std::optional<int> rank, std::string_view dir,
                              const std::vector<OutputFile>& files, std::string_view missing,
                              std::string_view problem) = 0;
  virtual void record_gpu_figures(JobId job, int attempt, const GpuFigures& gpu) = 0;
  // Makes everything recorded so far durable. An error while it cannot be
  // done: then no job may start, and the scheduler calls it again later.
  [[nodiscard]] virtual Status sync() = 0;
};

// Told what the terminal should say of the journal.
class RunLogListener {
 public:
  virtual ~RunLogListener() = default;
  // Records cannot be written (said once, until they can be again).
  virtual void journal_failing(const Status& why) = 0;
  // They can be written again.
  virtual void journal_writable_again() = 0;
  // The live file could not be sealed (once for each reason); it goes on
  // growing.
  virtual void journal_not_sealed(const Status& why) = 0;
};

// A RunLog on the run's journal.
class JournalRunLog final : public RunLog {
 public:
  JournalRunLog(Journal& journal, RunLogListener& listener)
      : m_journal(journal), m_listener(listener) {}

  // `refresh` brings the journal's checkpoint up to date in the background
  // (false when it could not begin now): a sync calls it every
  // k_checkpoint_every_bytes of journal and when the live file was sealed.
  void set_checkpoint_refresh(std::function<bool()> refresh) { m_refresh = std::move(refresh); }

  void record_taken_ahead(JobTakenAheadRecord record) override;
  void record_launch(JobStartRecord record) override;
  void record_process_group(JobId job, const ProcessGroup& group, std::optional<int> rank) override;
  void record_end(JobId job, const JobExit& exit, std::chrono::milliseconds duration, bool rerun,
                  std::optional<int> failed_rank) override;
  void record_host_failed(std::string_view host, std::string_view message) override;
  void record_service_ready(JobId job, std::chrono::milliseconds waited,
                            const Params& variables) override;
  void record_outputs(JobId job, int attempt, std::optional<int> rank, std::string_view dir,
                      const std::vector<OutputFile>& files, std::string_view missing,
                      std::string_view problem) override;
  void record_gpu_figures(JobId job, int attempt, const GpuFigures& gpu) override;
  // Also seals the live file when it is due, and has the checkpoint
  // brought up to date.
  Status sync() override;

 private:
  // Tells the listener when the journal fails, and when it heals.
  void written(const Status& status);

  Journal& m_journal;
  RunLogListener& m_listener;
  std::function<bool()> m_refresh;
  std::uint64_t m_checkpointed_at = 0;  // the journal's bytes_appended() then
  bool m_failing = false;
  std::set<std::string> m_seal_failures_said;
};

}  // namespace runner
