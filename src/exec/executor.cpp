#include "runner/exec/executor.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <random>
#include <utility>

#include "runner/config/multi_node.h"
#include "runner/config/tcp_sockets.h"
#include "runner/exec/shell.h"

namespace runner {

namespace {

// Between the ports and the addresses in survey_network's output.
constexpr std::string_view k_addresses_line = "runner-addresses";

// The addresses `hostname -I` printed, but loopback ones.
std::vector<std::string> routable_addresses(const std::string& text) {
  std::vector<std::string> addresses;
  std::size_t begin = 0;
  while ((begin = text.find_first_not_of(" \t\n", begin)) != std::string::npos) {
    std::size_t end = text.find_first_of(" \t\n", begin);
    std::string address = text.substr(begin, end - begin);
    if (!is_loopback(address)) addresses.push_back(address);
    begin = end;
  }
  return addresses;
}

// How much of an own command's output is kept for its caller.
constexpr std::size_t k_own_output_limit = 65536;

// The groups a kill_leftovers_command printed, one "<word> <id>" a line:
// those after `word` ("killed" or "kept").
std::vector<long> groups_said(const std::string& output, std::string_view word) {
  std::vector<long> groups;
  std::size_t begin = 0;
  while (begin < output.size()) {
    std::size_t end = output.find('\n', begin);
    if (end == std::string::npos) end = output.size();
    std::string_view line(output.data() + begin, end - begin);
    long pgid = 0;
    if (line.size() > word.size() && line.substr(0, word.size()) == word &&
        line[word.size()] == ' ') {
      auto [ptr, ec] =
          std::from_chars(line.data() + word.size() + 1, line.data() + line.size(), pgid);
      if (ec == std::errc() && ptr == line.data() + line.size()) groups.push_back(pgid);
    }
    begin = end + 1;
  }
  return groups;
}

}  // namespace

Executor::Executor(int host, ExecutorEvents& events)
    : m_host(host),
      m_events(events),
      m_mark_prefix(fmt::format("{:08x}{:08x}", std::random_device{}(), std::random_device{}())) {}

std::string Executor::group_mark(TaskId task) const {
  return fmt::format("{}-{}", m_mark_prefix, task);
}

TaskId Executor::run_command(const std::string& command, CommandDone done) {
  return run_command_streaming(command, nullptr, std::move(done));
}

TaskId Executor::run_command_streaming(const std::string& command,
                                       std::function<void(std::string_view)> on_stdout,
                                       CommandDone done) {
  TaskId id = m_next_own_id++;
  m_own.emplace(id, OwnCommand{std::move(done), {}, std::move(on_stdout)});
  start_task(id, command);
  return id;
}

TaskId Executor::run_command_reading(const std::string& command, const std::string& input,
                                     CommandDone done) {
  TaskId id = m_next_own_id++;
  m_own.emplace(id, OwnCommand{std::move(done), {}, nullptr});
  start_task_reading(id, command, input);
  return id;
}

void Executor::poll_fds(std::vector<pollfd>& out) {
  poll_host_fds(out);
  poll_archive_fds(out);
}

void Executor::step(Clock::time_point now) {
  step_host(now);
  step_archives();
}

void Executor::stop_transfers() {
  for (TaskId id : m_transfers) signal_task(id, SIGKILL);
  // Its tar is killed once no host waits for the archive.
  for (AwaitedArchive& awaited : std::exchange(m_awaited_archives, {}))
    awaited.then(Status::error("stopped while its archive was being made"));
}

void Executor::start_task_with(TaskId task, const std::string& command, const TaskSetup& setup) {
  start_task_on_slots(
      task,
      setup.empty() ? command
                    : set_up_command(setup.environment, setup.files, command, std::to_string(task)),
      setup.slots);
}

void Executor::survey_network(std::function<void(Result<NetworkSurvey>)> done) {
  run_command(std::string("cat /proc/net/tcp /proc/net/tcp6 2>/dev/null; echo ") +
                  std::string(k_addresses_line) + "; hostname -I 2>/dev/null; true",
              [done = std::move(done)](const JobExit& exit, const std::string& output) {
                if (!exit.succeeded()) {
                  done(Status{exit.lost() ? ErrorKind::disconnected : ErrorKind::failed,
                              exit.error().empty() ? "reading /proc/net/tcp failed: " + output
                                                   : exit.error()});
                  return;
                }
                std::size_t split = output.find(k_addresses_line);
                NetworkSurvey survey;
                std::string_view sockets = std::string_view(output).substr(0, split);
                survey.ports_in_use = ports_in_use(sockets);
                survey.listening_ports = listening_ports(sockets);
                if (split != std::string::npos)
                  survey.addresses = routable_addresses(output.substr(split + k_addresses_line.size()));
                done(std::move(survey));
              });
}

void Executor::kill_leftovers(const std::vector<ProcessGroup>& groups,
                              std::function<void(const LeftoverCheck&)> done) {
  run_command(kill_leftovers_command(groups),
              [done = std::move(done)](const JobExit& exit, const std::string& output) {
                LeftoverCheck check;
                check.killed = groups_said(output, "killed");
                check.kept = groups_said(output, "kept");
                check.lost = exit.lost();
                if (!exit.succeeded()) check.error = exit.error().empty() ? output : exit.error();
                done(check);
              });
}

void Executor::report_failed(const Status& error) {
  // Own commands still waiting are gone with the host.
  m_transfers.clear();
  for (auto& [id, own] : std::exchange(m_own, {}))
    own.done(JobExit::lost_because(error.message()), own.output);
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
  if (own->second.on_stdout && stream == OutputStream::out) {
    own->second.on_stdout(bytes);
    return;
  }
  std::string& kept = own->second.output;
  kept.append(bytes.substr(0, k_own_output_limit - std::min(kept.size(), k_own_output_limit)));
}

void Executor::report_exited(TaskId task, const JobExit& exit) {
  auto own = m_own.find(task);
  if (own == m_own.end()) {
    m_events.task_exited(task, exit);
    return;
  }
  OwnCommand command = std::move(own->second);
  m_own.erase(own);
  m_transfers.erase(task);
  command.done(exit, command.output);
}

void Executor::report_signal_failed(TaskId task, int signal, const std::string& why) {
  if (!m_own.count(task)) m_events.signal_failed(task, signal, why);
}

}  // namespace runner
