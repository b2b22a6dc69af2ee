// HostTransport over libssh2: persistent non-blocking sessions, one channel
// per running job, more connections only when sshd's MaxSessions refuses a
// channel.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/exec/transport.h"

namespace runner {

struct SshOptions {
  // Key files tried after the agent, in order. Empty: ~/.ssh/id_ed25519,
  // ~/.ssh/id_ecdsa, ~/.ssh/id_rsa (those that exist).
  std::vector<std::string> identity_files;
  // Empty: ~/.ssh/known_hosts.
  std::string known_hosts;
  // Unknown host: append its key to known_hosts instead of refusing.
  // A changed key is always refused.
  bool accept_new_host_keys = false;
  // Try ssh-agent identities (SSH_AUTH_SOCK) first.
  bool use_agent = true;
  // The agent's socket. Empty: $SSH_AUTH_SOCK.
  std::string agent_socket;
  // TCP connect, SSH handshake, host-key check and authentication of one
  // connection must finish within this.
  std::chrono::milliseconds connect_timeout{10000};
  // While jobs run, a connection silent this long gets a keepalive request;
  // one silent for (keepalive_count_max + 1) intervals is lost. Zero: never.
  std::chrono::milliseconds keepalive_interval{15000};
  int keepalive_count_max = 3;
};

std::unique_ptr<HostTransport> make_ssh_transport(int host, const HostAddress& address,
                                                  const SshOptions& options,
                                                  TransportEvents& events);

}  // namespace runner
