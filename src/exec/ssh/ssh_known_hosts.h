// Private to the SSH executor: the OpenSSH known_hosts file. Chooses which
// host-key types to negotiate, checks the key a server presented and, when
// allowed, records a new one.
#pragma once

#include <libssh2.h>

#include <string>
#include <vector>

#include "runner/exec/executor.h"
#include "runner/core/result.h"
#include "runner/exec/ssh/ssh_config.h"

namespace runner::ssh {

// What the check needs to know about the host and the user's choices.
struct HostKeyPolicy {
  // known_hosts files, read in order; a new key is added to the first.
  std::vector<std::string> files;
  std::string host;  // the name known_hosts records (HostKeyAlias, else HostName)
  int port = 22;
  HostKeyChecking checking = HostKeyChecking::ask;
  std::string display;         // "node03 (127.0.0.1:2222)", for messages
  std::string record_command;  // the shell command that records the key; empty: ssh-keyscan
};

// How the host appears in known_hosts: "host", or "[host]:port" off port 22.
std::string known_hosts_name(const std::string& host, int port);

// The host-key methods to offer libssh2 before the handshake: only the key
// types known_hosts holds for this host, so that a server with several keys
// is asked for the one we can check (libssh2 prefers ECDSA otherwise); all
// methods, ed25519 first, for a host not in the file. Empty if none apply.
std::string host_key_method_preference(LIBSSH2_SESSION* session, const HostKeyPolicy& policy);

// Checks the key of the finished handshake. An unknown key is refused (with
// the command that records it) unless the policy accepts new keys, then it
// is appended to the first file; a changed or revoked key is always
// refused. Success says how the key was found ("known", "new, added to
// FILE").
Result<std::string> verify_host_key(LIBSSH2_SESSION* session, const HostKeyPolicy& policy);

}  // namespace runner::ssh
