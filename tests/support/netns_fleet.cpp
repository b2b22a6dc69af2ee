// Hosts in network namespaces behind one bridge (see netns_fleet.h). Every
// step is an `ip` command, so that what the fleet did can be replayed by
// hand from a failure message.
#include "support/netns_fleet.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <sstream>
#include <stdexcept>

#include "support/sshd.h"

namespace runner::testing {

namespace {

constexpr int k_first_host = 11;  // host i is 10.X.Y.(11 + i); the bridge is .1

ProcessResult run(std::vector<std::string> args) {
  ProcessSpec spec;
  spec.args = std::move(args);
  spec.timeout = std::chrono::seconds(30);
  return run_process(spec);
}

// Runs an `ip` command that must succeed.
void ip(std::vector<std::string> args) {
  args.insert(args.begin(), "ip");
  ProcessResult result = run(args);
  if (result.status != 0) {
    std::string command;
    for (const std::string& arg : args) command += arg + " ";
    throw std::runtime_error(command + "failed: " + result.err);
  }
}

}  // namespace

std::unique_ptr<NetnsFleet> NetnsFleet::start(const TempDir& dir, int count, std::string& why_not) {
  if (::geteuid() != 0) {
    why_not = "network namespaces need root";
    return nullptr;
  }
  if (::access("/usr/sbin/sshd", X_OK) != 0) {
    why_not = "no /usr/sbin/sshd (install openssh-server)";
    return nullptr;
  }
  ProcessResult version = run({"ip", "-V"});
  if (version.status != 0) {
    why_not = "no `ip` command (install iproute2)";
    return nullptr;
  }
  // From here on the destructor undoes whatever was made, even on a throw.
  std::unique_ptr<NetnsFleet> fleet(new NetnsFleet(dir));
  fleet->make_bridge();
  std::string first = fleet->m_prefix + "n0";
  ProcessResult probe = run({"ip", "netns", "add", first});
  if (probe.status != 0) {
    why_not = "`ip netns add` failed: " + probe.err;
    return nullptr;
  }
  fleet->m_namespaces.push_back(first);
  for (int i = 0; i < count; ++i) fleet->add_host();
  for (int i = 1; i < count; ++i) {
    // A firewall filtering bridged traffic (bridge-nf-call-iptables with a
    // DROP policy) would show up later as jobs that cannot find each other.
    ProcessResult reach =
        fleet->run_on(0, {"bash", "-c", "exec 3<>/dev/tcp/" + fleet->address(i) + "/22"});
    if (reach.status != 0)
      throw std::runtime_error(
          fleet->hostname(0) + " cannot reach " + fleet->address(i) +
          ":22 over the bridge (a firewall on bridged traffic?): " + reach.err);
  }
  return fleet;
}

void NetnsFleet::make_bridge() {
  static std::atomic<int> fleets_made{0};
  const int pid = static_cast<int>(::getpid());
  m_prefix = fmt::format("rt{:x}f{}", pid, fleets_made++ % 100);
  // A /24 derived from the pid, then the next ones until one no address of
  // this machine is in.
  std::string in_use = run({"ip", "-4", "-o", "addr", "show"}).out;
  m_subnet_x = 100 + pid % 100;
  m_subnet_y = (pid / 100) % 256;
  for (int tried = 0;
       in_use.find(fmt::format("inet 10.{}.{}.", m_subnet_x, m_subnet_y)) != std::string::npos;
       ++tried) {
    if (tried == 256) throw std::runtime_error("no free 10.X.Y.0/24 subnet");
    m_subnet_y = (m_subnet_y + 1) % 256;
  }
  std::string bridge = m_prefix + "b";
  ip({"link", "add", bridge, "type", "bridge"});
  m_bridge = bridge;
  ip({"addr", "add", fmt::format("10.{}.{}.1/24", m_subnet_x, m_subnet_y), "dev", m_bridge});
  ip({"link", "set", m_bridge, "up"});
}

void NetnsFleet::add_host() {
  const int i = size();
  std::string name = fmt::format("{}n{}", m_prefix, i);
  // start() made the first namespace already, to learn whether it can.
  if (i == static_cast<int>(m_namespaces.size())) {
    ip({"netns", "add", name});
    m_namespaces.push_back(name);
  }
  std::string veth = fmt::format("{}v{}", m_prefix, i);
  ip({"link", "add", veth, "type", "veth", "peer", "name", k_interface, "netns", name});
  m_veths.push_back(veth);
  ip({"link", "set", veth, "master", m_bridge});
  ip({"link", "set", veth, "up"});
  ip({"-n", name, "addr", "add", address(i) + "/24", "dev", k_interface});
  ip({"-n", name, "link", "set", k_interface, "up"});
  ip({"-n", name, "link", "set", "lo", "up"});

  SshdOptions options;
  options.listen_address = address(i);
  options.port = 22;
  // sshd in the namespace, under a hostname of its own: unshare and the
  // shell exec, so the pid the fleet knows is sshd's.
  options.launcher = {"ip",       "netns", "exec",    name, "unshare",
                      "--uts",    "--",    "/bin/sh", "-c", "hostname \"$0\" && exec \"$@\"",
                      hostname(i)};
  if (!m_hosts.add(options)) throw std::runtime_error("sshd did not start in " + name);

  std::string config;
  for (int host = 0; host <= i; ++host)
    config += m_hosts.config_block(address(host), m_hosts.host(host),
                                   "  IdentitiesOnly yes\n  StrictHostKeyChecking yes\n"
                                   "  BatchMode yes\n");
  m_dir.write("fleet_ssh_config", config);
}

NetnsFleet::~NetnsFleet() {
  for (std::size_t i = 0; i < m_hosts.size(); ++i) m_hosts.host(static_cast<int>(i)).stop();
  for (const std::string& name : m_namespaces) {
    // Whatever still runs in the namespace (nothing, if every process came
    // through sshd) would keep it alive after `ip netns del`.
    std::istringstream pids(run({"ip", "netns", "pids", name}).out);
    for (pid_t pid = 0; pids >> pid;) ::kill(pid, SIGKILL);
    run({"ip", "netns", "del", name});
  }
  for (const std::string& veth : m_veths) run({"ip", "link", "del", veth});
  if (!m_bridge.empty()) run({"ip", "link", "del", m_bridge});
}

std::string NetnsFleet::address(int i) const {
  return fmt::format("10.{}.{}.{}", m_subnet_x, m_subnet_y, k_first_host + i);
}

std::string NetnsFleet::subnet() const {
  return fmt::format("10.{}.{}.0/24", m_subnet_x, m_subnet_y);
}

std::string NetnsFleet::hostname(int i) { return fmt::format("node{}", i); }

void NetnsFleet::write_hosts(int slots) const {
  std::string text;
  for (int i = 0; i < size(); ++i)
    text += fmt::format("- hostname: {}\n  slots: {}\n", address(i), slots);
  m_dir.write("hosts.yaml", text);
}

std::map<std::string, std::string> NetnsFleet::admit(const RemoteUser& user) {
  std::string config;
  for (int i = 0; i < size(); ++i) {
    user.allow_login(sshd(i));
    config += fmt::format(
        "Host {}\n  HostName {}\n  User {}\n  IdentityFile {}\n  UserKnownHostsFile {}\n",
        hostname(i), address(i), user.name(), key(), m_hosts.known_hosts_file());
  }
  return {{"RUNNER_SSH_CONFIG", m_dir.write("named_hosts_ssh_config", config)}};
}

ProcessResult NetnsFleet::run_on(int i, std::vector<std::string> args) const {
  args.insert(args.begin(), {"ip", "netns", "exec", m_namespaces.at(i)});
  return run(std::move(args));
}

}  // namespace runner::testing
