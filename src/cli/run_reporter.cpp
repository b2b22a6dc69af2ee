#include "runner/cli/run_reporter.h"

#include <fmt/format.h>

#include "gpu_telemetry.h"
#include "runner/config/job_render.h"
#include "runner/ui/exit_text.h"
#include "runner/ui/summary.h"

namespace runner {

RunReporter::RunReporter(const Fleet& fleet, Console& console, JobLogs& logs)
    : m_fleet(fleet), m_console(console), m_logs(logs) {
  for (const Slot& slot : fleet.slots) m_slot_usage.push_back({slot.label});
}

void RunReporter::gpu_figures_read(const JobGpuFigures& job) {
  for (int slot : job.slots)
    m_slot_usage[slot].gpu_energy_j = m_slot_usage[slot].gpu_energy_j.value_or(0) +
                                      job.figures.energy_j / static_cast<double>(job.slots.size());
}

void RunReporter::host_ready(const Host& host) {
  if (m_status) m_status->host_up(host.name);
}

void RunReporter::host_failed(const Host& host, const Status& error) {
  m_failed_hosts.push_back(host.name);
  m_console.error(fmt::format("{}: no jobs will run there", error.message()));
  if (m_status) m_status->host_down(host.name, host.slots.size());
}

void RunReporter::host_reconnecting(const Host& host, const Status& error, Clock::duration wait) {
  m_console.warn(fmt::format("{}; no new jobs there until it is back: reconnecting in {:.1f}s",
                             error.message(), std::chrono::duration<double>(wait).count()));
  if (m_status) m_status->host_down(host.name, host.slots.size());
}

namespace {

// Notes on one line: "a; b; c".
std::string join(const std::vector<std::string>& notes) {
  std::string text;
  for (const std::string& note : notes) text += (text.empty() ? "" : "; ") + note;
  return text;
}

// A job that spans hosts has a log per rank.
LogId log_of(const Job& job, const Task& task) {
  return job.layout ? LogId(job.id, task.rank) : LogId(job.id);
}

}  // namespace

void RunReporter::job_launched(const Job& job) {
  for (const Task& each : job.tasks) {
    LogId log = log_of(job, each);
    log_written(job.id, m_logs.open(log, job.attempt > 1));
    if (job.attempt > 1)
      log_written(job.id,
                  m_logs.append(log, fmt::format("--- runner: attempt {} of #{}, on {} ---\n",
                                                 job.attempt, job.id, each.label)));
    m_console.job_note(
        each.id, each.slots.front(), each.label,
        fmt::format("=== #{} run '{}' ===", job.id, shorten_command(each.command, 200)));
  }
  if (m_status) m_status->job_started(job.id, job.slots().size(), job.running().start);
  if (m_gpu_telemetry) m_gpu_telemetry->job_launched(job);
}

void RunReporter::task_started(const Job& job, const Task& task) {
  if (m_gpu_telemetry) m_gpu_telemetry->task_started(job, task);
}

void RunReporter::task_output(const Job& job, const Task& task, OutputStream stream,
                              std::string_view bytes) {
  log_written(job.id, m_logs.append(log_of(job, task), bytes));
  m_console.job_output(task.id, task.slots.front(), task.label, stream, bytes);
}

void RunReporter::job_finished(const Job& job, const JobExit& exit, Clock::duration took) {
  auto duration = std::chrono::duration_cast<std::chrono::milliseconds>(took);
  // A job that spans hosts ended as the rank that stopped the others.
  std::string how = describe_exit(exit);
  if (auto rank = job.failed_rank()) how = fmt::format("rank {}: {}", *rank, how);
  // One that did not start goes back quietly (see below).
  std::string end =
      exit.not_started() && job.will_rerun()
          ? fmt::format("=== #{} did not start; back to the queue ===", job.id)
          : fmt::format("=== #{} done ({}) after {} ===", job.id, how, format_duration(duration));
  for (const Task& task : job.tasks) {
    m_console.job_finished(task.id);
    m_console.job_note(task.id, task.slots.front(), task.label, end);
    if (Status whole = m_logs.close(log_of(job, task)); !whole.ok())
      m_incomplete_logs.try_emplace(job.id, whole.message());
  }
  // Its GPU figures come once read (gpu_figures_read), maybe at once.
  if (m_gpu_telemetry) m_gpu_telemetry->job_finished(job);
  if (m_status) m_status->job_finished(job.id, exit.succeeded(), took, job.will_rerun());
  std::vector<int> slots = job.slots();
  for (int slot : slots) {
    m_slot_usage[slot].busy += duration;
    ++m_slot_usage[slot].jobs;
  }
  if (job.will_rerun()) {
    // One that did not start goes back quietly: its host, set aside, is
    // named once with the reason.
    if (!exit.not_started())
      m_console.warn(fmt::format("#{} [{}] {}; {}", job.id, job.label(), how,
                                 job.reruns_in_next_run()
                                     ? "it runs again in the next run (runner queue --resume)"
                                     : "running it again"));
    return;
  }
  FinishedJob finished;
  finished.id = job.id;
  finished.label = job.label();
  const Task& ended = job.tasks[job.failed_rank().value_or(0)];
  finished.command = ended.command;
  finished.exit = exit;
  finished.log_path = m_logs.path(log_of(job, ended));
  finished.service = job.spec.service.has_value();
  finished.duration = duration;
  if (auto cut = m_incomplete_logs.find(job.id); cut != m_incomplete_logs.end())
    finished.log_problem = cut->second;
  if (auto lost = m_lost_outputs.find(job.id); lost != m_lost_outputs.end())
    finished.outputs_problem = lost->second;
  m_finished.push_back(std::move(finished));
  if (!exit.succeeded() && !exit.cancelled)
    m_console.warn(fmt::format("#{} [{}] failed: {}", job.id, job.label(), how));
}

void RunReporter::service_ready(const Job& job, Clock::duration waited, const Params& variables) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited);
  std::string given;
  for (const auto& [name, value] : variables) given += fmt::format(" <<{}>> = {}", name, value);
  const std::string& name = job.spec.service->name;
  m_console.info(fmt::format("service #{}{} [{}] is ready after {}{}", job.id,
                             name.empty() ? "" : " (" + name + ")", job.label(),
                             format_duration(ms), given.empty() ? "" : ";" + given));
}

void RunReporter::outputs_collected(JobId job, int attempt, std::optional<int> rank,
                                    const std::string& into, const FetchedFiles& fetched) {
  std::string whose = rank ? fmt::format("#{} rank {}", job, *rank) : fmt::format("#{}", job);
  if (!fetched.error.empty())
    m_console.warn(
        fmt::format("{}: its outputs could not all be brought back: {}", whose, fetched.error));
  if (!fetched.missing.empty())
    m_console.warn(fmt::format("{}: outputs not found on its host: {}", whose, fetched.missing));
  if (!fetched.refused.empty()) m_console.warn(fmt::format("{}: {}", whose, join(fetched.refused)));
  std::string unwritten = join(fetched.unwritten);
  if (!unwritten.empty()) {
    m_console.error(
        fmt::format("{}: outputs that came back could not be written to {}: {}; they "
                    "are lost",
                    whose, into, unwritten));
    std::string& lost = m_lost_outputs[job];
    lost += (lost.empty() ? "" : "; ") + unwritten;
    for (FinishedJob& finished : m_finished)
      if (finished.id == job) finished.outputs_problem = lost;
  }
}

void RunReporter::flush_logs() {
  Status status = m_logs.flush();
  if (!status.ok() && m_log_failures_said.insert(status.message()).second)
    m_console.error(status.message() + "; output that cannot be written is lost");
}

void RunReporter::journal_failing(const Status& why) {
  m_console.error(why.message() + "; no new job starts until it can be written");
}

void RunReporter::journal_writable_again() {
  m_console.info("the journal can be written again; jobs start again");
}

void RunReporter::journal_not_sealed(const Status& why) {
  m_console.warn(why.message() + "; it goes on growing");
}

void RunReporter::log_written(JobId job, const Status& status) {
  if (status.ok()) return;
  m_incomplete_logs.try_emplace(job, status.message());
  if (m_log_failures_said.insert(status.message()).second)
    m_console.error(
        fmt::format("#{}: {}; output that cannot be written is lost", job, status.message()));
}

void RunReporter::notice(const std::string& message) { m_console.info(message); }

void RunReporter::warning(const std::string& message) { m_console.warn(message); }

}  // namespace runner
