// Executor over libssh2: persistent non-blocking sessions, one channel
// per running job, more connections only when sshd's MaxSessions refuses a
// channel. Hosts are resolved through the user's OpenSSH configuration
// (`ssh -G`): aliases, User, Port, IdentityFile, known_hosts files,
// StrictHostKeyChecking, ProxyJump, ConnectTimeout, ServerAlive*.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/core/clock.h"
#include "runner/exec/executor.h"
#include "runner/core/status.h"

namespace runner {

// What the command line decides; set fields override the ssh configuration.
struct SshOptions {
  // Key files tried after the agent, in order. Empty: the ssh configuration's
  // IdentityFile, else ~/.ssh/id_ed25519, ~/.ssh/id_ecdsa, ~/.ssh/id_rsa
  // (those that exist).
  std::vector<std::string> identity_files;
  // The one known_hosts file to use. Empty: the configuration's
  // UserKnownHostsFile and GlobalKnownHostsFile.
  std::string known_hosts;
  // Unknown host: append its key to known_hosts instead of refusing, as
  // StrictHostKeyChecking accept-new. A changed key is always refused.
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
  // Like `ssh -F FILE`. Empty: ~/.ssh/config (and /etc/ssh/ssh_config).
  std::string config_file;
  // The OpenSSH client that resolves hosts (`ssh -G`). When it cannot be
  // run, runner's built-in parser reads the configuration instead.
  std::string ssh_program = "ssh";
  // Asks for the passphrase of an encrypted key file (once per key and
  // run); nullopt: none. Empty: ask on the terminal when stdin is one,
  // otherwise such keys are skipped with a note.
  std::function<std::optional<std::string>(const std::string& key_file)> ask_passphrase;
  // Called just before a passphrase is asked on the terminal, to clear it
  // for the prompt (the run's status line).
  std::function<void()> before_prompt;
  // The time, for what the executors decide outside their step (a
  // connection's start, the handshake limits); tests drive it.
  ClockSource clock = steady_clock_source();
};

// What the SSH executors of one run share: the resolved configuration,
// connections to jump hosts, handshake limits per server, passphrases.
class SshContext;
std::shared_ptr<SshContext> make_ssh_context(const SshOptions& options);

// Resolves the ssh configuration of every non-local address (and of the jump
// hosts they name) up front, several `ssh -G` at once. Returns what makes the
// configuration unusable, each naming the file and line at fault where known
// (Status::file(), Status::line()); empty when all is well.
std::vector<Status> resolve_ssh_config(SshContext& context,
                                       const std::vector<HostAddress>& addresses);
// Non-empty when the built-in parser was used instead of `ssh -G`: say it.
std::string ssh_config_note(const SshContext& context);

// How a connected host was reached, for `runner check`.
struct SshHostInfo {
  // "127.0.0.1:2222", "node03 (via bastion)", "node04 (via ProxyCommand)"
  std::string endpoint;
  std::string auth;      // "agent key me@laptop", "key /home/me/.ssh/id_ed25519"
  std::string host_key;  // "known", "new, added to ~/.ssh/known_hosts"
  std::optional<std::chrono::microseconds> round_trip;  // a channel open's answer time
};
// For an executor made by make_ssh_executor that reported host_ready;
// nullopt for any other.
std::optional<SshHostInfo> ssh_host_info(const Executor& executor);

// An executor that shares `context` with the run's other SSH executors.
// connect() after host_failed starts afresh, with new connections.
std::unique_ptr<Executor> make_ssh_executor(int host, const HostAddress& address,
                                            std::shared_ptr<SshContext> context,
                                            ExecutorEvents& events);
// The same with a context of its own.
std::unique_ptr<Executor> make_ssh_executor(int host, const HostAddress& address,
                                            const SshOptions& options, ExecutorEvents& events);

// The version of the libssh2 this process runs with (the shared library's,
// which may be newer than the headers it was built against), e.g. "1.10.0".
std::string libssh2_runtime_version();

}  // namespace runner
