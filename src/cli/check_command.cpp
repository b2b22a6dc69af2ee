// `runner check`: connect to every host as a run would, and print one line
// per host: reachable or not (and why), how it authenticated, its host key,
// the round trip, and the GPUs `nvidia-smi -L` lists. Exits 1 when a host is
// not usable. Threading: none; one event loop drives every executor.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <sstream>

#include "runner/cli/options.h"
#include "runner/config/hosts.h"
#include "runner/exec/executor.h"
#include "runner/ui/console.h"
#include "fleet_connections.h"

namespace runner {

namespace {

// Runs nvidia-smi when there is one; 127 says there is none.
constexpr const char* k_probe =
    "command -v nvidia-smi >/dev/null 2>&1 || exit 127; exec nvidia-smi -L";

// One host's check.
struct HostCheck {
  enum class State { connecting, probing, done };
  State state = State::connecting;
  bool usable = false;
  std::string line;
  std::string out;
  std::string err;
};

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)" -> "0 NVIDIA A100-SXM4-80GB"
std::vector<std::pair<std::string, std::string>> parse_gpus(const std::string& listing) {
  std::vector<std::pair<std::string, std::string>> gpus;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("GPU ", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string index = line.substr(4, colon - 4);
    std::string name = line.substr(colon + 1);
    size_t uuid = name.find(" (UUID");
    if (uuid != std::string::npos) name.erase(uuid);
    size_t start = name.find_first_not_of(' ');
    gpus.emplace_back(index, start == std::string::npos ? "" : name.substr(start));
  }
  return gpus;
}

// The `gpu` values hosts.yaml gives this host's slots that nvidia-smi does not list.
std::vector<std::string> missing_gpus(
    const Fleet& fleet, const Host& host,
    const std::vector<std::pair<std::string, std::string>>& gpus) {
  std::set<std::string> listed;
  for (const auto& gpu : gpus) listed.insert(gpu.first);
  std::vector<std::string> missing;
  for (int slot : host.slots) {
    for (const auto& [name, value] : fleet.slots[slot].params) {
      if (name != "gpu") continue;
      bool number = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
      if (number && !listed.count(value) &&
          std::find(missing.begin(), missing.end(), value) == missing.end()) {
        missing.push_back(value);
      }
    }
  }
  return missing;
}

class Checker final : public ExecutorEvents {
 public:
  Checker(const Fleet& fleet, std::vector<HostCheck>& checks) : m_fleet(fleet), m_checks(checks) {}

  void set_executors(std::vector<Executor*> executors) { m_executors = std::move(executors); }

  void host_ready(int host) override {
    m_checks[host].state = HostCheck::State::probing;
    m_executors[host]->start_task(static_cast<JobId>(host) + 1, k_probe);
  }

  void host_failed(int host, const Status& error) override {
    HostCheck& check = m_checks[host];
    if (check.state == HostCheck::State::done) return;
    check.state = HostCheck::State::done;
    check.usable = false;
    check.line = fmt::format("{}: FAILED: {}", m_fleet.hosts[host].name, error.message());
  }

  void task_started(TaskId, long) override {}
  // A check sends no signals.
  void signal_failed(JobId, int, const std::string&) override {}

  void task_output(TaskId job, OutputStream stream, std::string_view bytes) override {
    HostCheck& check = m_checks[job - 1];
    (stream == OutputStream::out ? check.out : check.err).append(bytes);
  }

  void task_exited(TaskId job, const JobExit& exit) override {
    int host = static_cast<int>(job - 1);
    HostCheck& check = m_checks[host];
    if (check.state == HostCheck::State::done) return;
    check.state = HostCheck::State::done;
    const Host& entry = m_fleet.hosts[host];
    std::vector<std::string> parts = {"ok"};
    if (std::optional<SshHostInfo> info = ssh_host_info(*m_executors[host])) {
      parts.push_back(info->endpoint);
      parts.push_back(info->auth);
      parts.push_back("host key " + info->host_key);
      if (info->round_trip) {
        parts.push_back(fmt::format("rtt {:.1f} ms", info->round_trip->count() / 1000.0));
      }
    } else {
      parts.push_back("local");
    }
    check.usable = true;
    if (!exit.error().empty()) {
      check.usable = false;
      parts.front() = "FAILED";
      parts.push_back("cannot run commands: " + exit.error());
    } else if (exit.code() == 127) {
      parts.push_back("no nvidia-smi");
    } else if (exit.code() != 0 || !exit.signal().empty()) {
      check.usable = false;
      parts.front() = "FAILED";
      std::string said = first_line(check.err.empty() ? check.out : check.err);
      parts.push_back(fmt::format(
          "nvidia-smi -L failed ({}){}",
          exit.signal().empty() ? fmt::format("exit {}", exit.code()) : "signal " + exit.signal(),
          said.empty() ? "" : ": " + said));
    } else {
      auto gpus = parse_gpus(check.out);
      std::vector<std::string> names;
      for (const auto& [index, name] : gpus) names.push_back(index + " " + name);
      parts.push_back(gpus.empty()
                          ? "nvidia-smi lists no GPUs"
                          : fmt::format("{} GPU{}: {}", gpus.size(), gpus.size() == 1 ? "" : "s",
                                        fmt::join(names, ", ")));
      std::vector<std::string> missing = missing_gpus(m_fleet, entry, gpus);
      if (!missing.empty()) {
        parts.push_back(fmt::format("but hosts.yaml names gpu {}, which nvidia-smi does not list",
                                    fmt::join(missing, ", ")));
      }
    }
    check.line = fmt::format("{}: {}", entry.name, fmt::join(parts, ", "));
  }

 private:
  const Fleet& m_fleet;
  std::vector<HostCheck>& m_checks;
  std::vector<Executor*> m_executors;
};

}  // namespace

int check_hosts(const CheckOptions& options) {
  if (options.net) return check_network(options);
  signal(SIGPIPE, SIG_IGN);
  Fleet fleet = load_hosts(options.hosts_file);
  Console console(stdout, stderr, ColorMode::never, 1);
  for (const std::string& repeat : repeated_slot_warnings(fleet, options.hosts_file))
    console.warn(repeat);
  std::shared_ptr<SshContext> context =
      prepare_ssh(fleet, options.ssh, [&](const std::string& note) { console.warn(note); });

  std::vector<HostCheck> checks(fleet.hosts.size());
  Checker checker(fleet, checks);
  FleetConnections connections(fleet, context, checker);
  checker.set_executors(connections.executors());
  connections.connect();

  // Connecting has its own timeout; nvidia-smi gets `probe_timeout` more.
  Clock::time_point give_up =
      Clock::now() + options.ssh.connect_timeout * 3 + options.probe_timeout;
  std::size_t printed = 0;
  auto print_ready_lines = [&] {
    while (printed < checks.size() && checks[printed].state == HostCheck::State::done) {
      fmt::print(stdout, "{}\n", checks[printed].line);
      std::fflush(stdout);
      ++printed;
    }
  };
  while (printed < checks.size()) {
    print_ready_lines();
    if (printed == checks.size()) break;
    if (Clock::now() >= give_up) {
      for (std::size_t h = 0; h < checks.size(); ++h) {
        HostCheck& check = checks[h];
        if (check.state == HostCheck::State::done) continue;
        check.line = fmt::format("{}: FAILED: {}", fleet.hosts[h].name,
                                 check.state == HostCheck::State::probing
                                     ? "connected, but nvidia-smi -L did not finish in time"
                                     : "no answer in time");
        check.state = HostCheck::State::done;
      }
      continue;
    }
    connections.run_once(std::chrono::milliseconds(200));
  }
  connections.close();

  std::size_t unusable = std::count_if(checks.begin(), checks.end(),
                                       [](const HostCheck& check) { return !check.usable; });
  if (unusable > 0) {
    console.error(fmt::format("{} of {} hosts not usable", unusable, checks.size()));
    return 1;
  }
  return 0;
}

}  // namespace runner
