// A fleet of "hosts" for integration tests: several throwaway sshd
// instances on 127.0.0.1 (one port each) sharing one client key, with the
// known_hosts, hosts.yaml and command-line flags a run against them needs.
// Runs never read the machine's ~/.ssh: they get the key, the known_hosts
// file and an empty ssh configuration of the test's own.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/sshd.h"
#include "support/temp_dir.h"

namespace runner::testing {

class LoopbackFleet {
 public:
  explicit LoopbackFleet(const TempDir& dir) : m_dir(dir) {}

  // Starts `count` more sshd hosts and rewrites known_hosts. False when
  // this machine has no sshd (see sshd_required()).
  bool start(int count, SshdOptions options = {});
  // Starts one more host as start(1, options) does and returns it; nullptr
  // when this machine has no sshd. The first host may authorize a key of the
  // test's own (`options.client_key`); later hosts authorize the fleet's key.
  Sshd* add(SshdOptions options = {});

  std::size_t size() const { return m_hosts.size(); }
  Sshd& host(int i) { return *m_hosts.at(i); }
  const std::string& key() const { return m_key; }
  // "user@127.0.0.1:PORT", as hosts.yaml names host `i`.
  std::string name(int i) const;
  // hosts.yaml with every host and `slots` anonymous slots each.
  void write_hosts(int slots) const;
  std::string known_hosts_file() const { return m_dir.file("known_hosts"); }
  // An ssh_config "Host ALIAS" block reaching `host` at its address as its
  // user, with the fleet's key (or `identity`) and known_hosts, then `extra`.
  std::string config_block(const std::string& alias, const Sshd& host,
                           const std::string& extra = "", const std::string& identity = "") const;

  // `runner ARGS` in the test directory, reaching this fleet.
  ProcessSpec runner(std::vector<std::string> args) const;

 private:
  const TempDir& m_dir;
  std::vector<std::unique_ptr<Sshd>> m_hosts;
  std::string m_key;
};

}  // namespace runner::testing
