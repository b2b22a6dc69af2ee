// A fleet of test hosts that are machines of their own on a network: each
// host is a network namespace (with its own UTS hostname) holding one end
// of a veth pair whose other end is in a bridge of the root namespace, and
// runs its own sshd on port 22 of its address. Hosts reach each other, and
// the test reaches them, over that bridge, at 10.X.Y.11, .12, ... of a /24
// chosen per fleet so that concurrent test processes do not clash. They
// share this machine's file system, so a test's directory is "shared
// storage" of the fleet. Needs root and `ip netns`; everything made is
// stopped by pid and deleted when the fleet goes away.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/remote_user.h"
#include "support/temp_dir.h"

namespace runner::testing {

class NetnsFleet {
 public:
  // Makes `count` hosts with files in `dir`. Returns nullptr and sets
  // `why_not` when this machine cannot have them (not root, no `ip netns`,
  // no sshd); throws std::runtime_error when a step fails otherwise.
  static std::unique_ptr<NetnsFleet> start(const TempDir& dir, int count, std::string& why_not);

  ~NetnsFleet();
  NetnsFleet(const NetnsFleet&) = delete;
  NetnsFleet& operator=(const NetnsFleet&) = delete;

  int size() const { return static_cast<int>(m_veths.size()); }
  // "10.X.Y.11" for host 0: its name in hosts.yaml, hostfiles and ssh.
  std::string address(int i) const;
  // "10.X.Y.0/24", e.g. for MPI's `btl_tcp_if_include`.
  std::string subnet() const;
  // The hosts' network interface, the same name in every namespace (for
  // GLOO_SOCKET_IFNAME and the like).
  static constexpr const char* k_interface = "fleet0";
  // Host i's network namespace, for `ip netns exec NAME` by hand.
  const std::string& namespace_name(int i) const { return m_namespaces.at(i); }
  // Host i's hostname in its own UTS namespace: "node<i>".
  static std::string hostname(int i);
  // Host i's sshd (e.g. for RemoteUser::allow_login).
  const Sshd& sshd(int i) { return m_hosts.host(i); }
  // The key every host authorizes for the current user.
  const std::string& key() const { return m_hosts.key(); }

  // hosts.yaml naming every host by address, `slots` anonymous slots each.
  void write_hosts(int slots) const;
  // An ssh_config reaching every host by address with the fleet's key and
  // known_hosts only (never ~/.ssh): `ssh -F ssh_config_file()` is how a
  // job's own launcher (mpirun) reaches the other hosts.
  std::string ssh_config_file() const { return m_dir.file("fleet_ssh_config"); }
  // Lets `user` log in to every host, and returns the environment in which
  // runner reaches host i by the name hostname(i), as a user's ~/.ssh/config
  // names a cluster's nodes: each at its address, as `user`, with the
  // fleet's key and known_hosts (RUNNER_SSH_CONFIG, a file written into the
  // test directory).
  std::map<std::string, std::string> admit(const RemoteUser& user);
  // `runner ARGS` in the test directory, reaching this fleet.
  ProcessSpec runner(std::vector<std::string> args) const {
    return m_hosts.runner(std::move(args));
  }
  // `args` run inside host i's network namespace, as root.
  ProcessResult run_on(int i, std::vector<std::string> args) const;

 private:
  explicit NetnsFleet(const TempDir& dir) : m_dir(dir), m_hosts(dir) {}
  // Picks the subnet and names, creates the bridge.
  void make_bridge();
  // Namespace, veth pair, addresses and sshd of the next host.
  void add_host();

  const TempDir& m_dir;
  LoopbackFleet m_hosts;
  int m_subnet_x = 0, m_subnet_y = 0;
  std::string m_prefix;  // of every namespace and link name, unique on this machine
  std::string m_bridge;
  std::vector<std::string> m_namespaces;
  std::vector<std::string> m_veths;  // the root namespace's ends
};

}  // namespace runner::testing

// In a test body, after `auto fleet = NetnsFleet::start(dir, n, why_not)`:
// skips the test when the machine cannot have network namespaces, but fails
// it when CI=true (tests run as root there, with iproute2 installed).
#define RUNNER_REQUIRE_NETNS_FLEET(ptr, why_not)                                               \
  do {                                                                                         \
    if (!(ptr)) {                                                                              \
      if (::runner::testing::sshd_required()) {                                                \
        FAIL() << "no network namespace fleet (" << (why_not) << "), and CI=true requires it"; \
      }                                                                                        \
      GTEST_SKIP() << "no network namespace fleet: " << (why_not);                             \
    }                                                                                          \
  } while (false)
