#include "support/loopback_fleet.h"

namespace runner::testing {

bool LoopbackFleet::start(int count, SshdOptions options) {
  for (int i = 0; i < count; ++i) {
    options.client_key = m_key;
    auto sshd = Sshd::start(m_dir.file("sshd" + std::to_string(m_hosts.size())), options);
    if (!sshd) return false;
    m_key = sshd->client_key();
    m_hosts.push_back(std::move(sshd));
  }
  std::string known;
  for (const auto& host : m_hosts) known += host->known_hosts_line() + "\n";
  m_dir.write("known_hosts", known);
  return true;
}

Sshd* LoopbackFleet::add(SshdOptions options) {
  if (m_key.empty()) m_key = options.client_key;
  if (!start(1, std::move(options))) return nullptr;
  return m_hosts.back().get();
}

std::string LoopbackFleet::name(int i) const {
  const Sshd& host = *m_hosts.at(i);
  return host.user() + "@127.0.0.1:" + std::to_string(host.port());
}

void LoopbackFleet::write_hosts(int slots) const {
  std::string text;
  for (std::size_t i = 0; i < m_hosts.size(); ++i)
    text += "- hostname: " + name(static_cast<int>(i)) + "\n  slots: " + std::to_string(slots) +
            "\n";
  m_dir.write("hosts.yaml", text);
}

std::string LoopbackFleet::config_block(const std::string& alias, const Sshd& host,
                                        const std::string& extra,
                                        const std::string& identity) const {
  return "Host " + alias + "\n  HostName " + host.address() + "\n  Port " + std::to_string(host.port()) +
         "\n  User " + host.user() + "\n  IdentityFile " + (identity.empty() ? m_key : identity) +
         "\n  UserKnownHostsFile " + known_hosts_file() + "\n" + extra;
}

ProcessSpec LoopbackFleet::runner(std::vector<std::string> args) const {
  args.insert(args.end(), {"--identity", m_key, "--known-hosts", known_hosts_file(),
                           "--ssh-config", m_dir.write("ssh_config", "")});
  return runner_spec(std::move(args), m_dir.path());
}

}  // namespace runner::testing
