// See host_probe.h.
#include "host_probe.h"

#include <fmt/format.h>

#include "runner/cli/host_round.h"
#include "runner/exec/executor.h"
#include "runner/probe/gpu_listing.h"

namespace runner {

namespace {

class Prober final : public HostRound {
 public:
  Prober(std::vector<HostProbe>& probes, std::string command,
         const std::function<void(int, const HostProbe&)>& done)
      : HostRound("the command"), m_probes(probes), m_command(std::move(command)), m_done(done) {}

  void task_output(TaskId task, OutputStream stream, std::string_view bytes) override {
    HostProbe& probe = m_probes[task - 1];
    (stream == OutputStream::out ? probe.out : probe.err).append(bytes);
  }

  void task_exited(TaskId task, const JobExit& exit) override {
    int host = static_cast<int>(task - 1);
    if (is_done(host)) return;
    HostProbe& probe = m_probes[host];
    probe.answered = true;
    probe.exit = exit;
    probe.ssh = ssh_host_info(executor(host));
    finish(host);
  }

 private:
  void begin(int host, Executor& executor) override {
    executor.start_task(static_cast<TaskId>(host) + 1, m_command);
  }

  void failed(int host, const std::string& why) override {
    m_probes[host].failure = why;
    finish(host);
  }

  void finish(int host) {
    if (done(host) && m_done) m_done(host, m_probes[host]);
  }

  std::vector<HostProbe>& m_probes;
  std::string m_command;
  const std::function<void(int, const HostProbe&)>& m_done;
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
  prober.run(fleet, std::move(ssh), Clock::now() + connect_timeout * 3 + command_timeout);
  return probes;
}

}  // namespace runner
