// See host_probe.h.
#include "host_probe.h"

#include <fmt/format.h>

#include <algorithm>

#include "runner/exec/executor.h"
#include "runner/exec/gpu_listing.h"
#include "fleet_connections.h"

namespace runner {

namespace {

class Prober final : public ExecutorEvents {
 public:
  Prober(std::vector<HostProbe>& probes, std::string command,
         const std::function<void(int, const HostProbe&)>& done)
      : m_probes(probes), m_command(std::move(command)), m_done(done), m_state(probes.size()) {}

  void set_executors(std::vector<Executor*> executors) { m_executors = std::move(executors); }

  bool finished() const {
    return std::all_of(m_state.begin(), m_state.end(), [](State s) { return s == State::done; });
  }

  // Every host not done yet fails with why.
  void give_up() {
    for (std::size_t h = 0; h < m_state.size(); ++h)
      if (m_state[h] != State::done)
        fail(static_cast<int>(h), m_state[h] == State::running
                                      ? "connected, but the command did not finish in time"
                                      : "no answer in time");
  }

  void host_ready(int host) override {
    m_state[host] = State::running;
    m_executors[host]->start_task(static_cast<TaskId>(host) + 1, m_command);
  }

  void host_failed(int host, const Status& error) override {
    if (m_state[host] != State::done) fail(host, error.message());
  }

  void task_started(TaskId, long) override {}
  // A probe sends no signals.
  void signal_failed(TaskId, int, const std::string&) override {}

  void task_output(TaskId task, OutputStream stream, std::string_view bytes) override {
    HostProbe& probe = m_probes[task - 1];
    (stream == OutputStream::out ? probe.out : probe.err).append(bytes);
  }

  void task_exited(TaskId task, const JobExit& exit) override {
    int host = static_cast<int>(task - 1);
    if (m_state[host] == State::done) return;
    HostProbe& probe = m_probes[host];
    probe.answered = true;
    probe.exit = exit;
    probe.ssh = ssh_host_info(*m_executors[host]);
    finish(host);
  }

 private:
  enum class State { connecting, running, done };

  void fail(int host, std::string why) {
    m_probes[host].failure = std::move(why);
    finish(host);
  }

  void finish(int host) {
    m_state[host] = State::done;
    if (m_done) m_done(host, m_probes[host]);
  }

  std::vector<HostProbe>& m_probes;
  std::string m_command;
  const std::function<void(int, const HostProbe&)>& m_done;
  std::vector<State> m_state;
  std::vector<Executor*> m_executors;
};

// The first line of `text`, without trailing blanks.
std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

GpuAnswer read_gpu_answer(const HostProbe& probe) {
  GpuAnswer answer;
  const JobExit& exit = probe.exit;
  if (!probe.answered) {
    answer.why = probe.failure;
  } else if (!exit.error().empty()) {
    answer.kind = GpuAnswer::Kind::cannot_run;
    answer.why = exit.error();
  } else if (exit.code() == 127) {
    answer.kind = GpuAnswer::Kind::no_nvidia_smi;
  } else if (exit.code() != 0 || !exit.signal().empty()) {
    answer.kind = GpuAnswer::Kind::failed;
    std::string said = first_line(probe.err.empty() ? probe.out : probe.err);
    answer.why =
        (exit.signal().empty() ? fmt::format("exit {}", exit.code()) : "signal " + exit.signal()) +
        (said.empty() ? "" : ": " + said);
  } else {
    answer.kind = GpuAnswer::Kind::listed;
    answer.gpus = parse_gpu_listing(probe.out);
  }
  return answer;
}

std::vector<HostProbe> probe_hosts(const Fleet& fleet, std::shared_ptr<SshContext> ssh,
                                   const std::string& command, Clock::duration connect_timeout,
                                   Clock::duration command_timeout,
                                   const std::function<void(int host, const HostProbe&)>& done) {
  std::vector<HostProbe> probes(fleet.hosts.size());
  Prober prober(probes, command, done);
  FleetConnections connections(fleet, std::move(ssh), prober);
  prober.set_executors(connections.executors());
  connections.connect();
  Clock::time_point give_up = Clock::now() + connect_timeout * 3 + command_timeout;
  while (!prober.finished()) {
    if (Clock::now() >= give_up) {
      prober.give_up();
      break;
    }
    connections.run_once(std::chrono::milliseconds(200));
  }
  connections.close();
  return probes;
}

}  // namespace runner
