// Private to the SSH executor: what all SSH executors of one run share.
// The resolved OpenSSH configuration of every host, the connections to jump
// hosts (one per jump host, shared by every host behind it), a limit on
// concurrent handshakes per server (sshd's MaxStartups drops bursts), and
// the passphrases of encrypted keys, asked once per key.
// Threading: none; every call comes from the event loop's thread.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/core/result.h"
#include "runner/exec/ssh/ssh_config.h"
#include "runner/exec/ssh/ssh_executor.h"
#include "ssh_common.h"

namespace runner {

namespace ssh {
class JumpLink;
}

class SshContext {
 public:
  explicit SshContext(SshOptions options);
  ~SshContext();
  SshContext(const SshContext&) = delete;
  SshContext& operator=(const SshContext&) = delete;

  const SshOptions& options() const { return m_options; }

  // Resolves the configuration of every address and of the jump hosts they
  // name, running as few rounds of `ssh -G` as possible. Returns what makes
  // the configuration unusable, each naming the file and line at fault where
  // known (nothing when all is well).
  std::vector<Status> resolve(const std::vector<HostAddress>& addresses);
  // Says so when the built-in parser had to be used.
  const std::string& note() const { return m_resolver.note(); }

  // The target for `address` (resolved now if resolve() did not), with its
  // jump hosts, or why it cannot be reached as configured.
  Result<ssh::HostTarget> target_for(int host, const HostAddress& address);

  // The live connection to jumps[count - 1], reached through jumps[0..count-1),
  // shared by every host behind it; a fresh one after a failure.
  std::shared_ptr<ssh::JumpLink> jump_link(const std::vector<ssh::HostTarget>& jumps, size_t count);

  // At most a few handshakes run at once per server; a refused one lowers
  // the limit. `server` names it ("127.0.0.1:22", or a tunnel's end).
  bool enter_handshake(const std::string& server);
  void leave_handshake(const std::string& server);
  void handshake_refused(const std::string& server);

  // Whether anyone can be asked for passphrases (SshOptions::ask_passphrase,
  // or stdin is a terminal).
  bool can_ask_passphrase() const;
  // The passphrase of an encrypted key file: remembered, or asked (once per
  // key; again after a rejected one, up to three times).
  std::optional<std::string> passphrase(const std::string& key);
  void passphrase_failed(const std::string& key, const std::string& passphrase);
  // How long the event loop stood still while someone typed passphrases:
  // connection timeouts do not count it.
  Clock::duration time_in_prompts() const { return m_time_in_prompts; }

 private:
  struct Server {
    int in_flight = 0;
    int limit = 0;
    // Once a handshake was refused: when recently finished ones stop
    // counting (sshd notices a finished login only a moment later).
    std::vector<Clock::time_point> settling;
  };
  struct Passphrase {
    std::optional<std::string> value;
    int asked = 0;
  };

  const Result<SshHostConfig>& lookup(const SshQuery& query);
  ssh::HostTarget make_target(const SshHostConfig& config) const;
  // Appends the jump hosts in front of `config` to `hops`, nearest first.
  Status route(const SshHostConfig& config, int depth, std::vector<ssh::HostTarget>& hops);

  SshOptions m_options;
  SshConfigResolver m_resolver;
  std::map<std::string, Result<SshHostConfig>> m_resolved;  // by query
  std::map<std::string, std::weak_ptr<ssh::JumpLink>> m_links;
  std::map<std::string, Server> m_servers;
  std::map<std::string, Passphrase> m_passphrases;
  Clock::duration m_time_in_prompts{};
  bool m_prompts_refused = false;
};

}  // namespace runner
