// The user's OpenSSH client configuration, resolved per host exactly as
// `ssh -G HOST` prints it (Host and Match blocks, Include, %-tokens), so that
// runner reaches every host the way `ssh HOST` does. When no `ssh` program
// exists, a built-in parser reads a documented subset of ssh_config instead.
// Resolution runs `ssh -G`, which reads files only and never contacts a host.
// Threading: none; resolve() blocks while the `ssh -G` processes run.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/result.h"

namespace runner {

// OpenSSH's StrictHostKeyChecking.
enum class HostKeyChecking {
  yes,         // refuse unknown keys
  ask,         // OpenSSH asks; runner cannot, so it refuses like `yes`
  accept_new,  // record unknown keys, refuse changed ones
  no,          // as accept_new: a changed key is refused all the same
};

// One host as OpenSSH's configuration describes it.
struct SshHostConfig {
  std::string alias;     // the name asked about, as the user wrote it
  std::string hostname;  // HostName: what is connected to
  std::string user;
  int port = 22;
  // IdentityFile, in order, with ~, ${VAR} and %-tokens expanded.
  std::vector<std::string> identity_files;
  // No IdentityFile was configured: these are OpenSSH's defaults.
  bool default_identity_files = true;
  bool identities_only = false;
  std::vector<std::string> user_known_hosts_files;
  std::vector<std::string> global_known_hosts_files;
  HostKeyChecking host_key_checking = HostKeyChecking::ask;
  std::string host_key_alias;  // the name known_hosts records, when not hostname
  // ProxyJump hops, nearest first, as written ("[user@]host[:port]" or an
  // ssh:// URI); empty: a direct connection.
  std::vector<std::string> proxy_jump;
  // ProxyCommand with its %-tokens expanded; empty: none. Used unless
  // proxy_jump is set (OpenSSH keeps whichever comes first; so does ssh -G).
  std::string proxy_command;
  bool proxy_use_fdpass = false;  // not supported: such a host is refused
  std::optional<std::chrono::seconds> connect_timeout;
  int server_alive_interval = 0;  // seconds; 0: not configured
  int server_alive_count_max = 3;
  // IdentityAgent: "none", a socket path, or unset ($SSH_AUTH_SOCK).
  std::optional<std::string> identity_agent;
  bool batch_mode = false;
  bool compression = false;  // zlib, as `Compression yes` asks
};

// A host to resolve. `user` and `port` written inline in hosts.yaml win over
// the configuration, as `ssh -l USER -p PORT` do.
struct SshQuery {
  std::string host;
  std::string user;  // empty: the configuration decides
  int port = 0;      // 0: the configuration decides
};

// Parses a ProxyJump hop: "host", "user@host", "host:port", "user@host:port",
// "[v6]:port", "ssh://user@host:port". nullopt when malformed.
std::optional<SshQuery> parse_jump_hop(std::string_view hop);

// Where the configuration comes from.
struct SshConfigSource {
  // Like `ssh -F FILE`. Empty: ~/.ssh/config, then /etc/ssh/ssh_config.
  std::string config_file;
  // The OpenSSH client, looked up in PATH. When it cannot be run, the
  // built-in parser is used.
  std::string ssh_program = "ssh";
  // For ~ in paths. Empty: the user's home directory from the password
  // database, as ssh does (then $HOME).
  std::string home;
};

// The command line that asks `ssh` about one host: ssh -G [-F FILE]
// [-l USER] [-p PORT] HOST.
std::vector<std::string> ssh_g_arguments(const SshConfigSource& source, const SshQuery& query);

// What expand_ssh_tokens() substitutes.
struct SshTokenValues {
  std::string home;        // %d and ~
  std::string local_user;  // %u
  std::string uid;         // %i
  std::string local_host;  // %l (%L: up to the first dot)
};
SshTokenValues local_token_values(const std::string& home);

// What a keyword's value gets expanded with, as OpenSSH does it: a path
// (IdentityFile, UserKnownHostsFile, ...) takes a leading ~, ${VAR} and the
// %-tokens %% %d %h %i %k %L %l %n %p %r %u; a command (ProxyCommand) takes
// only %% %h %n %p %r, and its shell does the rest.
enum class SshExpansion { path, command };

// Expands `text`, a value of `config`; fails for an unknown token or an
// unset variable.
Result<std::string> expand_ssh_tokens(std::string_view text, const SshHostConfig& config,
                                      const SshTokenValues& local,
                                      SshExpansion kind = SshExpansion::path);

// Parses the output of `ssh -G` for `query`. Identity files are expanded;
// the rest is taken as printed.
Result<SshHostConfig> parse_ssh_g_output(std::string_view text, const SshQuery& query,
                                         const SshTokenValues& local);

// The built-in subset of ssh_config, for machines without the ssh client:
// Host blocks (patterns with * ? and !), Match blocks with `all`, `host`,
// `originalhost`, `user` and `localuser` (any other criterion makes the
// block never match), Include (globs; relative to ~/.ssh), and the keywords
// HostName, User, Port, IdentityFile, IdentitiesOnly, UserKnownHostsFile,
// GlobalKnownHostsFile, StrictHostKeyChecking, HostKeyAlias, ProxyJump,
// ProxyCommand, ProxyUseFdpass, ConnectTimeout, ServerAliveInterval,
// ServerAliveCountMax, IdentityAgent, BatchMode and Compression. The first
// value found wins, as in OpenSSH; IdentityFile accumulates. Other keywords
// are ignored. A failure names the file and line at fault where there is one
// (Status::file(), Status::line()).
Result<SshHostConfig> resolve_with_builtin_parser(const SshConfigSource& source,
                                                  const SshQuery& query,
                                                  const SshTokenValues& local);

// Resolves hosts through `ssh -G` (several at once), or the built-in parser
// when the ssh client cannot be run.
class SshConfigResolver {
 public:
  explicit SshConfigResolver(SshConfigSource source);

  // One answer per query, in order: the host's configuration, or why it
  // cannot be used, naming the file and line at fault where ssh does.
  std::vector<Result<SshHostConfig>> resolve(const std::vector<SshQuery>& queries);
  // Non-empty once the built-in parser was used: says so and why.
  const std::string& note() const { return m_note; }

 private:
  SshConfigSource m_source;
  SshTokenValues m_local;
  std::optional<bool> m_have_ssh;
  std::string m_note;
};

}  // namespace runner
