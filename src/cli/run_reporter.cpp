#include "runner/cli/run_reporter.h"

#include <fmt/format.h>

namespace runner {

RunReporter::RunReporter(const Fleet& fleet, Console& console, Journal& journal, JobLogs& logs)
    : m_fleet(fleet), m_console(console), m_journal(journal), m_logs(logs) {}

void RunReporter::host_ready(const Host&) {}

void RunReporter::host_failed(const Host& host, const TransportError& error) {
  m_failed_hosts.push_back(host.name);
  m_console.error(fmt::format("{}: no jobs will run there", error.message));
  m_journal.host_failed(host.name, error.message);
}

void RunReporter::job_started(const RunningJob& job) {
  JobStartRecord record;
  record.job = job.id;
  record.command = job.command;
  record.slot = job.label;
  record.host = m_fleet.hosts[job.host].name;
  for (int slot : job.slots) record.slot_indices.push_back(m_fleet.slots[slot].index);
  record.params = job.spec.params;
  record.line = job.spec.line;
  m_journal.job_start(record);
  m_logs.open(job.id);
}

void RunReporter::job_pgid(const RunningJob& job) { m_journal.job_pgid(job.id, job.pgid); }

void RunReporter::job_output(const RunningJob& job, OutputStream stream, std::string_view bytes) {
  m_logs.append(job.id, bytes);
  m_console.job_output(job.id, job.slots.front(), job.label, stream, bytes);
}

void RunReporter::job_finished(const RunningJob& job, const JobExit& exit, Clock::duration took) {
  auto duration = std::chrono::duration_cast<std::chrono::milliseconds>(took);
  m_console.job_finished(job.id);
  m_logs.close(job.id);
  m_journal.job_end(job.id, exit, duration);
  FinishedJob finished;
  finished.id = job.id;
  finished.label = job.label;
  finished.command = job.command;
  finished.exit = exit;
  finished.log_path = m_logs.path(job.id);
  finished.duration = duration;
  m_finished.push_back(std::move(finished));
  if (!exit.succeeded()) {
    std::string why = !exit.error.empty()    ? exit.error
                      : !exit.signal.empty() ? "killed by " + exit.signal
                                             : fmt::format("exit {}", exit.code);
    m_console.warn(fmt::format("#{} [{}] failed: {}", job.id, job.label, why));
  }
}

void RunReporter::notice(const std::string& message) { m_console.info(message); }

void RunReporter::warning(const std::string& message) { m_console.warn(message); }

}  // namespace runner
