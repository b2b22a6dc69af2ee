#include "runner/exec/executor.h"

#include <fmt/format.h>

#include <random>
#include <utility>

#include "runner/exec/shell.h"

namespace runner {

Executor::Executor(int host, ExecutorEvents& events)
    : m_host(host),
      m_events(events),
      m_mark_prefix(fmt::format("{:08x}{:08x}", std::random_device{}(), std::random_device{}())) {}

std::string Executor::group_mark(TaskId task) const {
  return fmt::format("{}-{}", m_mark_prefix, task);
}

TaskId Executor::start_own_task(const std::string& command, OwnTaskHandler handler,
                                const std::optional<std::string>& input) {
  TaskId id = m_next_own_id++;
  m_own.emplace(id, std::move(handler));
  if (input)
    start_task_reading(id, command, *input);
  else
    start_task(id, command);
  return id;
}

void Executor::start_task_with(TaskId task, const std::string& command, const TaskSetup& setup) {
  start_task_on_slots(
      task,
      setup.empty() ? command
                    : set_up_command(setup.environment, setup.files, command, std::to_string(task)),
      setup.slots);
}

void Executor::report_failed(const Status& error) {
  // Own commands still waiting are gone with the host.
  for (auto& [id, own] : std::exchange(m_own, {}))
    own.exited(JobExit::lost_because(error.message()));
  m_events.host_failed(m_host, error);
}

void Executor::report_started(TaskId task, long pgid) {
  if (!m_own.count(task)) m_events.task_started(task, pgid);
}

void Executor::report_output(TaskId task, OutputStream stream, std::string_view bytes) {
  auto own = m_own.find(task);
  if (own == m_own.end()) {
    m_events.task_output(task, stream, bytes);
    return;
  }
  own->second.output(stream, bytes);
}

void Executor::report_exited(TaskId task, const JobExit& exit) {
  auto own = m_own.find(task);
  if (own == m_own.end()) {
    m_events.task_exited(task, exit);
    return;
  }
  OwnTaskHandler handler = std::move(own->second);
  m_own.erase(own);
  handler.exited(exit);
}

void Executor::report_signal_failed(TaskId task, int signal, const std::string& why) {
  if (!m_own.count(task)) m_events.signal_failed(task, signal, why);
}

}  // namespace runner
