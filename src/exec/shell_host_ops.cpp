// ShellHostOps's own commands, and what it reads of a host with them: its
// network (survey_network, and for `check --net` survey_interfaces and
// probe_connections), the leftovers of lost jobs (kill_leftovers)
// and what its GPUs hold (look_at_gpus).
// Copying files is in file_fetch.cpp and file_put.cpp, but the count of
// the copies under way that stop_transfers stops.
#include "runner/exec/shell_host_ops.h"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <utility>

#include "runner/config/multi_node.h"
#include "runner/config/tcp_sockets.h"
#include "runner/exec/shell.h"
#include "runner/probe/gpu_listing.h"
#include "runner/probe/net_check_scripts.h"

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

Executor::OwnTaskHandler own_command_handler(std::function<void(std::string_view)> on_stdout,
                                             HostOps::CommandDone done) {
  auto output = std::make_shared<std::string>();
  return {[output, on_stdout = std::move(on_stdout)](OutputStream stream, std::string_view bytes) {
            if (on_stdout && stream == OutputStream::out) {
              on_stdout(bytes);
              return;
            }
            output->append(
                bytes.substr(0, k_own_output_limit - std::min(output->size(), k_own_output_limit)));
          },
          [output, done = std::move(done)](const JobExit& exit) { done(exit, *output); }};
}

TaskId ShellHostOps::run_command(const std::string& command, CommandDone done) {
  return run_command_streaming(command, nullptr, std::move(done));
}

TaskId ShellHostOps::run_command_streaming(const std::string& command,
                                           std::function<void(std::string_view)> on_stdout,
                                           CommandDone done) {
  return m_executor.start_own_task(command,
                                   own_command_handler(std::move(on_stdout), std::move(done)));
}

void ShellHostOps::stop_command(TaskId command) { m_executor.signal_task(command, SIGKILL); }

void ShellHostOps::run_transfer(const std::string& command, const std::optional<std::string>& input,
                                std::function<void(std::string_view)> on_stdout, CommandDone done) {
  // The command may end at once (its host is gone): it is counted only
  // while it runs.
  struct Transfer {
    TaskId id = 0;
    bool ended = false;
  };
  auto transfer = std::make_shared<Transfer>();
  Executor::OwnTaskHandler handler = own_command_handler(
      std::move(on_stdout),
      [this, transfer, done = std::move(done)](const JobExit& exit, const std::string& output) {
        transfer->ended = true;
        m_transfers.erase(transfer->id);
        done(exit, output);
      });
  transfer->id = m_executor.start_own_task(command, std::move(handler), input);
  if (!transfer->ended) m_transfers.insert(transfer->id);
}

void ShellHostOps::stop_transfers() {
  for (TaskId id : std::set<TaskId>(m_transfers)) m_executor.signal_task(id, SIGKILL);
  // Its tar is killed once no host waits for the archive.
  for (AwaitedArchive& awaited : std::exchange(m_awaited_archives, {}))
    awaited.then(Status::error("stopped while its archive was being made"));
}

void ShellHostOps::survey_network(std::function<void(Result<NetworkSurvey>)> done) {
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
                  survey.addresses =
                      routable_addresses(output.substr(split + k_addresses_line.size()));
                done(std::move(survey));
              });
}

void ShellHostOps::survey_interfaces(std::function<void(Result<HostSurvey>)> done) {
  run_command(host_survey_command(),
              [done = std::move(done)](const JobExit& exit, const std::string& output) {
                if (exit.lost() || !exit.error().empty()) {
                  done(Status{exit.lost() ? ErrorKind::disconnected : ErrorKind::failed,
                              exit.error()});
                  return;
                }
                done(parse_host_survey(output));
              });
}

void ShellHostOps::probe_connections(const std::string& tool,
                                     const std::vector<std::string>& tools,
                                     const std::vector<ProbeTarget>& targets, int timeout_seconds,
                                     std::function<void(const ConnectionProbes&)> done) {
  run_command(prober_command(tool, tools, targets, timeout_seconds),
              [done = std::move(done)](const JobExit& exit, const std::string& output) {
                done(ConnectionProbes{parse_probe_answers(output), exit.lost()});
              });
}

TaskId ShellHostOps::look_at_gpus(std::function<void(const GpuLookAnswer&)> done) {
  return run_command(k_gpu_usage, [done = std::move(done)](const JobExit& exit,
                                                           const std::string& output) {
    GpuLookAnswer answer;
    answer.exit = exit;
    if (exit.succeeded()) answer.usage = parse_gpu_usage(output);
    if (!answer.usage) answer.said = output.substr(0, output.find('\n'));
    done(answer);
  });
}

void ShellHostOps::kill_leftovers(const std::vector<ProcessGroup>& groups,
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

}  // namespace runner
