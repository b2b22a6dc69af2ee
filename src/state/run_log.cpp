#include "runner/state/run_log.h"

namespace runner {

void JournalRunLog::record_taken_ahead(JobTakenAheadRecord record) {
  written(m_journal.job_taken_ahead(std::move(record)));
}

void JournalRunLog::record_launch(JobStartRecord record) {
  written(m_journal.job_start(std::move(record)));
}

void JournalRunLog::record_process_group(JobId job, const ProcessGroup& group,
                                         std::optional<int> rank) {
  written(m_journal.job_pgid(job, group, rank));
}

void JournalRunLog::record_end(JobId job, const JobExit& exit, std::chrono::milliseconds duration,
                               bool rerun, std::optional<int> failed_rank) {
  written(m_journal.job_end(job, exit, duration, rerun, failed_rank));
}

void JournalRunLog::record_host_failed(std::string_view host, std::string_view message) {
  written(m_journal.host_failed(host, message));
}

void JournalRunLog::record_service_ready(JobId job, std::chrono::milliseconds waited,
                                         const Params& variables) {
  written(m_journal.service_ready(job, waited, variables));
}

void JournalRunLog::record_outputs(JobId job, int attempt, std::optional<int> rank,
                                   std::string_view dir, const std::vector<OutputFile>& files,
                                   std::string_view missing, std::string_view problem) {
  written(m_journal.outputs(job, attempt, rank, dir, files, missing, problem));
}

void JournalRunLog::record_gpu_figures(JobId job, int attempt, const GpuFigures& gpu) {
  written(m_journal.job_gpu(job, attempt, gpu));
}

Status JournalRunLog::sync() {
  Status status = m_journal.sync();
  written(status);
  if (!status.ok()) return status;
  bool sealed_now = false;
  if (m_journal.wants_rotation()) {
    Status sealed = m_journal.rotate();
    if (!sealed.ok() && m_seal_failures_said.insert(sealed.message()).second)
      m_listener.journal_not_sealed(sealed);
    sealed_now = sealed.ok();
  }
  bool due =
      sealed_now || m_journal.bytes_appended() - m_checkpointed_at >= k_checkpoint_every_bytes;
  if (m_refresh && due && m_refresh()) m_checkpointed_at = m_journal.bytes_appended();
  return status;
}

void JournalRunLog::written(const Status& status) {
  if (!status.ok() && !m_failing)
    m_listener.journal_failing(status);
  else if (status.ok() && m_failing)
    m_listener.journal_writable_again();
  m_failing = !status.ok();
}

}  // namespace runner
