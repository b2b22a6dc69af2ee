// `runner check --net`: whether the hosts reach each other over TCP, as the
// ranks of a multi-node job must. Every host is surveyed (tools, interfaces
// and addresses, ports in use); each then listens on a free port of its own
// for the check only, every other host connects to each of its addresses
// and its master address, and the listeners are killed (they also end by
// themselves). Prints each host's interfaces, the reachability of every
// ordered pair and warnings; exits 1 when a pair cannot be shown to connect.
// Threading: none; one event loop drives every executor.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "fatal.h"
#include "fleet_connections.h"
#include "runner/cli/options.h"
#include "runner/config/hosts.h"
#include "runner/config/multi_node.h"
#include "runner/core/printable.h"
#include "runner/exec/executor.h"
#include "runner/exec/host_ops.h"
#include "runner/probe/net_check_scripts.h"
#include "runner/probe/net_reachability.h"
#include "runner/ui/console.h"

namespace runner {

namespace {

// Where listeners' ports start: below the master ports multi-node jobs are
// given (from k_first_master_port up), so that a check while a run goes on
// never holds the port a job is about to be given.
constexpr int k_first_check_port = k_first_master_port - 100;
// Each connection attempt's limit (tried twice at most).
constexpr int k_attempt_timeout_seconds = 3;
// A listener ends by itself after this, should the runner be gone.
constexpr int k_listener_lifetime_seconds = 120;

// One host's progress through the check.
struct NetHostCheck {
  enum class Phase { connecting, surveying, surveyed, starting_listener, probing, done };
  Phase phase = Phase::connecting;
  std::string failure;  // non-empty: the host takes no further part, and why
  HostSurvey survey;
  std::string listener_note;  // why it does not listen, when it does not
  int port = 0;
  bool listening = false;
  bool listener_running = false;
  std::string listener_output;
  std::optional<std::string> prober;
  bool probed = false;
  std::vector<ProbeAnswer> probe_answers;
};

// What a multi-node job whose rank 0 is `hosts[rank0]` gives as
// master_addr: its node address, unless that is a loopback one and another
// host is elsewhere, when it is the host's first address that others can
// use (as `hostname -I` lists them).
std::string master_address_among(const std::vector<NetHost>& hosts, std::size_t rank0) {
  const NetHost& host = hosts[rank0];
  bool elsewhere = std::any_of(hosts.begin(), hosts.end(), [](const NetHost& other) {
    return !is_loopback(other.master_address);
  });
  if (!is_loopback(host.master_address) || !elsewhere) return host.master_address;
  for (const InterfaceAddress& entry : host.addresses) {
    if (!is_loopback_address(entry.address) && !is_ipv6_link_local(entry.address)) {
      return entry.address;
    }
  }
  return host.master_address;
}

std::string token_of(int host) { return fmt::format("runner-net-check-{}", host); }

// What a prober said instead of the target's token: why it failed, or the
// token of another host's listener (the same address on two hosts, such as
// docker0's, leads each to itself).
std::string why_not(const Fleet& fleet, const std::string& said) {
  for (std::size_t h = 0; h < fleet.hosts.size(); ++h) {
    if (said == token_of(static_cast<int>(h))) {
      return "answered by " + fleet.hosts[h].name + "'s listener";
    }
  }
  return said;
}

class NetCheck final : public ExecutorEvents {
 public:
  explicit NetCheck(std::vector<NetHostCheck>& checks) : m_checks(checks) {}

  void set_executors(std::vector<Executor*> executors) { m_executors = std::move(executors); }
  void set_host_ops(std::vector<HostOps*> host_ops) { m_host_ops = std::move(host_ops); }

  void host_ready(int host) override {
    m_checks[host].phase = NetHostCheck::Phase::surveying;
    m_host_ops[host]->survey_interfaces(
        [this, host](Result<HostSurvey> survey) { surveyed(host, std::move(survey)); });
  }

  void host_failed(int host, const Status& error) override {
    NetHostCheck& check = m_checks[host];
    check.listener_running = false;
    if (check.phase != NetHostCheck::Phase::done || check.failure.empty()) {
      check.failure = error.message();
    }
    check.phase = NetHostCheck::Phase::done;
  }

  void task_started(TaskId, long) override {}
  // Listeners are killed at the end; a kill that does not arrive is one
  // the listener's own lifetime makes up for.
  void signal_failed(TaskId, int, const std::string&) override {}

  void task_output(TaskId task, OutputStream, std::string_view bytes) override {
    NetHostCheck& check = m_checks[task - 1];
    check.listener_output.append(bytes);
    if (check.phase == NetHostCheck::Phase::starting_listener &&
        check.listener_output.find(std::string(k_listening_line) + "\n") != std::string::npos) {
      check.listening = true;
      check.phase = NetHostCheck::Phase::surveyed;
    }
  }

  void task_exited(TaskId task, const JobExit& exit) override {
    NetHostCheck& check = m_checks[task - 1];
    check.listener_running = false;
    if (check.phase != NetHostCheck::Phase::starting_listener) return;
    std::string said = check.listener_output.substr(0, check.listener_output.find('\n'));
    check.listener_note = said.empty() ? "its listener ended: " + exit.error() : said;
    check.phase = NetHostCheck::Phase::surveyed;
  }

  // Starts the host's listener on `port` with `tool`.
  void start_listener(int host, const std::string& tool, int port) {
    NetHostCheck& check = m_checks[host];
    check.port = port;
    check.phase = NetHostCheck::Phase::starting_listener;
    check.listener_running = true;
    m_executors[host]->start_task(
        static_cast<TaskId>(host) + 1,
        listener_command(tool, port, token_of(host), k_listener_lifetime_seconds));
  }

  // Starts the host's prober against `targets`.
  void start_prober(int host, const std::vector<ProbeTarget>& targets) {
    NetHostCheck& check = m_checks[host];
    check.phase = NetHostCheck::Phase::probing;
    m_host_ops[host]->probe_connections(
        *check.prober, check.survey.tools, targets, k_attempt_timeout_seconds,
        [this, host](const ConnectionProbes& probes) {
          NetHostCheck& check = m_checks[host];
          if (check.phase != NetHostCheck::Phase::probing) return;
          check.phase = NetHostCheck::Phase::done;
          check.probed = !probes.lost;
          check.probe_answers = probes.answers;
        });
  }

  void stop_listener(int host) {
    if (m_checks[host].listener_running) {
      m_executors[host]->signal_task(static_cast<TaskId>(host) + 1, SIGKILL);
    }
  }

 private:
  void surveyed(int host, Result<HostSurvey> survey) {
    NetHostCheck& check = m_checks[host];
    if (check.phase != NetHostCheck::Phase::surveying) return;
    check.phase = NetHostCheck::Phase::surveyed;
    if (!survey) {
      check.failure = "cannot run commands: " + survey.status().message();
      check.phase = NetHostCheck::Phase::done;
      return;
    }
    check.survey = std::move(*survey);
    check.prober = prober_tool(check.survey.tools);
    if (!listener_tool(check.survey.tools)) check.listener_note = "no python3, perl or nc to listen with";
  }

  std::vector<NetHostCheck>& m_checks;
  std::vector<Executor*> m_executors;
  std::vector<HostOps*> m_host_ops;
};

using Phase = NetHostCheck::Phase;

bool all_past(const std::vector<NetHostCheck>& checks, std::initializer_list<Phase> waiting) {
  return std::none_of(checks.begin(), checks.end(), [&](const NetHostCheck& check) {
    return std::find(waiting.begin(), waiting.end(), check.phase) != waiting.end();
  });
}

// A line of the report on stdout; what hosts said in it (interfaces, what
// a listener or a probe printed) is printable().
void print_line(const std::string& line) { fmt::print("{}\n", printable(line)); }

void print_host(const Host& host, const NetHostCheck& check) {
  if (!check.failure.empty()) {
    print_line(fmt::format("{}: FAILED: {}", host.name, check.failure));
    return;
  }
  std::vector<std::string> parts;
  parts.push_back(check.survey.interfaces_from.empty() ? "no interface listing"
                                                       : "read with " + check.survey.interfaces_from);
  parts.push_back(check.listening ? fmt::format("listened on port {}", check.port)
                                  : "cannot listen: " + check.listener_note);
  parts.push_back(check.prober ? "probed with " + *check.prober
                               : "cannot probe: no python3, perl, bash or nc");
  print_line(fmt::format("{}: {}", host.name, fmt::join(parts, ", ")));
  std::vector<std::string> interfaces;
  std::map<std::string, std::vector<std::string>> addresses;
  for (const InterfaceAddress& entry : check.survey.addresses) {
    if (!addresses.count(entry.interface)) interfaces.push_back(entry.interface);
    addresses[entry.interface].push_back(
        entry.prefix < 0 ? entry.address : fmt::format("{}/{}", entry.address, entry.prefix));
  }
  std::size_t width = 0;
  for (const std::string& name : interfaces) width = std::max(width, name.size());
  for (const std::string& name : interfaces) {
    print_line(fmt::format("  {:<{}}  {}", name, width, fmt::join(addresses[name], " ")));
  }
}

std::string describe_path(const PathResult& path) {
  std::string text = path.candidate.address;
  if (!path.candidate.interface.empty()) text += " (" + path.candidate.interface + ")";
  if (path.candidate.master) text += " [master]";
  if (!path.answered) text += ": " + path.why;
  return text;
}

void print_pair(const Fleet& fleet, const PairReachability& pair) {
  std::vector<std::string> working, failed;
  for (const PathResult& path : pair.paths) {
    (path.answered ? working : failed).push_back(describe_path(path));
  }
  std::string line =
      fmt::format("  {} -> {}: {}", fleet.hosts[pair.from].name, fleet.hosts[pair.to].name,
                  working.empty() ? "NONE" : fmt::format("{}", fmt::join(working, ", ")));
  if (!failed.empty()) line += fmt::format("; failed: {}", fmt::join(failed, "; "));
  print_line(line);
}

// Runs the loop until `done` or the time is up; then `late` names the hosts
// still waiting.
void run_until(FleetConnections& connections, std::vector<NetHostCheck>& checks,
               const std::function<bool()>& done, Clock::duration limit,
               const std::function<void(NetHostCheck&)>& late) {
  Clock::time_point give_up = Clock::now() + limit;
  while (!done() && Clock::now() < give_up) connections.run_once(std::chrono::milliseconds(100));
  if (!done()) std::for_each(checks.begin(), checks.end(), late);
}

// Each surveyed host with a listener tool listens on a free port of its own
// (ports differ between hosts: two names of hosts.yaml may be one machine).
void start_listeners(std::vector<NetHostCheck>& checks, NetCheck& net_check) {
  std::set<int> taken;
  for (std::size_t h = 0; h < checks.size(); ++h) {
    NetHostCheck& check = checks[h];
    std::optional<std::string> tool = listener_tool(check.survey.tools);
    if (check.phase != Phase::surveyed || !tool) continue;
    int port = first_free_port(k_first_check_port, check.survey.ports_in_use, taken);
    if (port == 0) {
      check.listener_note = fmt::format("no free port from {} up", k_first_check_port);
      continue;
    }
    taken.insert(port);
    net_check.start_listener(static_cast<int>(h), *tool, port);
  }
}

// The hosts as the reachability analysis sees them, and which host listens
// on which port.
std::vector<NetHost> net_hosts(const Fleet& fleet, const std::vector<NetHostCheck>& checks,
                               FleetConnections& connections, std::map<int, int>& host_of_port) {
  std::vector<NetHost> hosts(fleet.hosts.size());
  for (std::size_t h = 0; h < checks.size(); ++h) {
    hosts[h].name = fleet.hosts[h].name;
    hosts[h].master_address =
        node_address(fleet, fleet.hosts[h].slots, connections.executors()[h]->address());
    hosts[h].addresses = checks[h].survey.addresses;
  }
  const std::vector<NetHost> as_reached = hosts;
  for (std::size_t h = 0; h < checks.size(); ++h) {
    hosts[h].master_address = master_address_among(as_reached, h);
    hosts[h].listening = checks[h].listening && checks[h].failure.empty();
    if (hosts[h].listening) host_of_port[checks[h].port] = static_cast<int>(h);
  }
  return hosts;
}

// Every surveyed host with a prober connects to every other host's
// candidate addresses on its listener's port.
void start_probers(const std::vector<NetHostCheck>& checks, const std::vector<NetHost>& hosts,
                   const std::map<int, int>& host_of_port, NetCheck& net_check) {
  for (std::size_t h = 0; h < checks.size(); ++h) {
    if (checks[h].phase != Phase::surveyed || !checks[h].prober) continue;
    std::vector<ProbeTarget> targets;
    for (const auto& [port, target] : host_of_port) {
      if (target == static_cast<int>(h)) continue;
      for (const CandidateAddress& candidate : candidate_addresses(hosts[target]))
        targets.push_back({candidate.address, port, token_of(target)});
    }
    net_check.start_prober(static_cast<int>(h), targets);
  }
}

// What the probers saw, each connection an answer or not.
std::vector<NetProbe> probes_seen(const Fleet& fleet, const std::vector<NetHostCheck>& checks,
                                  std::vector<NetHost>& hosts,
                                  const std::map<int, int>& host_of_port) {
  std::vector<NetProbe> probes;
  for (std::size_t h = 0; h < checks.size(); ++h) {
    hosts[h].probing = checks[h].probed && checks[h].failure.empty();
    for (const ProbeAnswer& answer : checks[h].probe_answers) {
      auto target = host_of_port.find(answer.port);
      if (target == host_of_port.end()) continue;
      bool answered = answer.said == token_of(target->second);
      probes.push_back({static_cast<int>(h), target->second, answer.address, answered,
                        answered ? "" : why_not(fleet, answer.said)});
    }
  }
  return probes;
}

// Prints the hosts, the pairs and the warnings; 1 when a pair cannot be
// shown to connect.
int print_reachability(const Fleet& fleet, const std::vector<NetHostCheck>& checks,
                       const std::vector<NetHost>& hosts, const NetAnalysis& analysis,
                       Console& console) {
  for (std::size_t h = 0; h < checks.size(); ++h) print_host(fleet.hosts[h], checks[h]);
  fmt::print("\nreachability (from -> to: the addresses that answered; [master]: the master "
             "address):\n");
  for (const PairReachability& pair : analysis.pairs) print_pair(fleet, pair);
  std::vector<std::string> warnings = analysis.warnings;
  std::size_t unchecked = 0;
  for (std::size_t from = 0; from < checks.size(); ++from) {
    for (std::size_t to = 0; to < checks.size(); ++to) {
      if (from == to || (hosts[from].probing && hosts[to].listening)) continue;
      ++unchecked;
    }
  }
  if (unchecked > 0) {
    warnings.push_back(fmt::format("{} ordered pair{} of hosts could not be checked (see the hosts "
                                   "above)",
                                   unchecked, unchecked == 1 ? "" : "s"));
  }
  if (!warnings.empty()) {
    fmt::print("\nwarnings:\n");
    for (const std::string& warning : warnings) print_line("  " + warning);
  }
  std::fflush(stdout);
  if (analysis.some_pair_unreachable || unchecked > 0) {
    console.error(analysis.some_pair_unreachable ? "some hosts cannot reach each other"
                                                 : "the network between some hosts is unknown");
    return 1;
  }
  return 0;
}

}  // namespace

int check_network(const CheckOptions& options) {
  signal(SIGPIPE, SIG_IGN);
  Fleet fleet = value_or_fatal(load_hosts(options.hosts_file));
  Console console(stdout, stderr, ColorMode::never, 1);
  std::shared_ptr<SshContext> context =
      prepare_ssh(fleet, options.ssh, [&](const std::string& note) { console.warn(note); });

  std::vector<NetHostCheck> checks(fleet.hosts.size());
  NetCheck net_check(checks);
  FleetConnections connections(fleet, context, net_check);
  net_check.set_executors(connections.executors());
  net_check.set_host_ops(connections.host_ops());
  connections.connect();

  run_until(
      connections, checks, [&] { return all_past(checks, {Phase::connecting, Phase::surveying}); },
      options.ssh.connect_timeout * 3 + options.probe_timeout, [](NetHostCheck& check) {
        if (check.phase != Phase::connecting && check.phase != Phase::surveying) return;
        check.failure = check.phase == Phase::connecting
                            ? "no answer in time"
                            : "connected, but the survey did not finish in time";
        check.phase = Phase::done;
      });

  start_listeners(checks, net_check);
  run_until(
      connections, checks, [&] { return all_past(checks, {Phase::starting_listener}); },
      options.probe_timeout, [](NetHostCheck& check) {
        if (check.phase != Phase::starting_listener) return;
        check.listener_note = "its listener did not start in time";
        check.phase = Phase::surveyed;
      });

  std::map<int, int> host_of_port;
  std::vector<NetHost> hosts = net_hosts(fleet, checks, connections, host_of_port);
  start_probers(checks, hosts, host_of_port, net_check);
  run_until(
      connections, checks, [&] { return all_past(checks, {Phase::probing}); },
      std::chrono::seconds(2 * k_attempt_timeout_seconds + 10), [](NetHostCheck& check) {
        if (check.phase == Phase::probing) check.phase = Phase::done;
      });

  for (std::size_t h = 0; h < checks.size(); ++h) net_check.stop_listener(static_cast<int>(h));
  run_until(
      connections, checks,
      [&] {
        return std::none_of(checks.begin(), checks.end(),
                            [](const NetHostCheck& check) { return check.listener_running; });
      },
      std::chrono::seconds(5), [](NetHostCheck&) {});
  connections.close();

  std::vector<NetProbe> probes = probes_seen(fleet, checks, hosts, host_of_port);
  return print_reachability(fleet, checks, hosts, analyse_reachability(hosts, probes), console);
}

}  // namespace runner
