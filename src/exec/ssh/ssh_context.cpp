// What the SSH executors of one run share: configuration, jump links,
// handshake limits and passphrases. Threading: none.
#include "ssh_context.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "ssh_jump.h"

namespace runner {

namespace {

// Whether runner can use the ProxyCommand of `config`, if it has one; if
// not, what to do. `name`: the host as the user wrote it.
Status proxy_supported(const SshHostConfig& config, const std::string& name) {
  if (config.proxy_command.empty() || !config.proxy_jump.empty() || !config.proxy_use_fdpass) {
    return Status();
  }
  return {ErrorKind::connect,
          fmt::format("{}: the ssh configuration sets ProxyUseFdpass for its ProxyCommand, which "
                      "runner does not support; use a ProxyCommand that relays the connection "
                      "on its stdin and stdout (as `ssh -W %h:%p bastion` does), or ProxyJump",
                      name)};
}

// Handshakes at once per server before sshd's MaxStartups teaches fewer;
// sshd's default (10:30:100) starts dropping at 10.
constexpr int k_handshakes_per_server = 6;
constexpr int k_passphrase_prompts = 3;
// After a refusal, how long a finished handshake still counts against the
// server's limit.
constexpr auto k_handshake_settling = std::chrono::milliseconds(50);
constexpr int k_max_jump_depth = 8;

std::string query_key(const SshQuery& query) {
  return fmt::format("{}@{}:{}", query.user, query.host, query.port);
}

SshQuery query_of(const HostAddress& address) {
  return SshQuery{address.host, address.user, address.port};
}

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// Reads a passphrase from the terminal with echo off, as ssh does. Gives up
// (nullopt) when an interrupt or termination signal arrives meanwhile: the
// run's signal watcher blocks them, and will act on them once this returns.
std::optional<std::string> ask_on_terminal(const std::string& key) {
  if (!isatty(STDIN_FILENO)) return std::nullopt;
  int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  // Echo goes off (and stale input is dropped) before the prompt appears,
  // so that nothing typed after it is echoed or lost.
  termios saved{};
  bool restore = tcgetattr(fd, &saved) == 0;
  if (restore) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    quiet.c_lflag |= ECHONL;
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  std::string prompt = fmt::format("Enter passphrase for key '{}': ", key);
  ssize_t ignored = write(fd, prompt.data(), prompt.size());
  std::string line;
  bool answered = false;
  while (true) {
    pollfd entry{fd, POLLIN, 0};
    int ready = poll(&entry, 1, 100);
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    if (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) ||
        sigismember(&pending, SIGHUP)) {
      break;
    }
    if (ready <= 0) continue;
    char buffer[256];
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    line.append(buffer, static_cast<size_t>(got));
    size_t end = line.find_first_of("\r\n");
    if (end != std::string::npos) {
      line.erase(end);
      answered = true;
      break;
    }
  }
  if (restore) tcsetattr(fd, TCSAFLUSH, &saved);
  if (!answered || !restore) ignored = write(fd, "\n", 1);
  (void)ignored;
  close(fd);
  if (!answered) return std::nullopt;
  return line;
}

}  // namespace

SshContext::SshContext(SshOptions options)
    : m_options(std::move(options)),
      m_resolver(SshConfigSource{m_options.config_file, m_options.ssh_program, ""}) {}

SshContext::~SshContext() = default;

const Result<SshHostConfig>& SshContext::lookup(const SshQuery& query) {
  std::string key = query_key(query);
  auto found = m_resolved.find(key);
  if (found != m_resolved.end()) return found->second;
  std::vector<Result<SshHostConfig>> answers = m_resolver.resolve({query});
  return m_resolved.insert_or_assign(key, std::move(answers.front())).first->second;
}

std::vector<Status> SshContext::resolve(const std::vector<HostAddress>& addresses) {
  std::vector<SshQuery> wanted;
  for (const HostAddress& address : addresses) {
    if (!address.local) wanted.push_back(query_of(address));
  }
  std::vector<Status> problems;
  std::set<std::string> reported;
  for (int round = 0; round <= k_max_jump_depth && !wanted.empty(); ++round) {
    std::vector<SshQuery> batch;
    std::set<std::string> batched;
    for (const SshQuery& query : wanted) {
      std::string key = query_key(query);
      if (m_resolved.count(key) || !batched.insert(key).second) continue;
      batch.push_back(query);
    }
    std::vector<Result<SshHostConfig>> answers = m_resolver.resolve(batch);
    for (size_t i = 0; i < batch.size(); ++i) {
      m_resolved.insert_or_assign(query_key(batch[i]), std::move(answers[i]));
    }
    // The jump hosts named by what was just resolved come next.
    std::vector<SshQuery> next;
    for (const SshQuery& query : wanted) {
      const Result<SshHostConfig>& answer = m_resolved.at(query_key(query));
      if (!answer) {
        const Status& problem = answer.status();
        if (reported.insert(problem.message()).second) problems.push_back(problem);
        continue;
      }
      for (const std::string& hop : answer->proxy_jump) {
        std::optional<SshQuery> hop_query = parse_jump_hop(hop);
        if (!hop_query) {
          Status problem = Status::error(
              fmt::format("{}: ProxyJump hop \"{}\" is not [user@]host[:port]", query.host, hop));
          if (reported.insert(problem.message()).second) problems.push_back(problem);
          continue;
        }
        next.push_back(*hop_query);
      }
    }
    wanted = std::move(next);
  }
  return problems;
}

ssh::HostTarget SshContext::make_target(const SshHostConfig& config) const {
  ssh::HostTarget target;
  target.name = config.alias;
  target.hostname = config.hostname;
  target.user = config.user;
  target.port = config.port;
  target.known_hosts_host = config.host_key_alias.empty() ? config.hostname : config.host_key_alias;
  target.host_key_alias = !config.host_key_alias.empty();
  if (config.proxy_jump.empty()) target.proxy_command = config.proxy_command;
  target.options = m_options;
  target.context = const_cast<SshContext*>(this);

  // --identity wins; OpenSSH's default list becomes the keys libssh2 can
  // use that exist, ed25519 first (libssh2 1.10 signs RSA only with SHA-1).
  if (!m_options.identity_files.empty()) {
    target.identity_files_explicit = true;
  } else if (config.default_identity_files) {
    target.options.identity_files.clear();
    for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa"}) {
      for (const std::string& path : config.identity_files) {
        if (base_name(path) == name && access(path.c_str(), F_OK) == 0) {
          target.options.identity_files.push_back(path);
        }
      }
    }
  } else {
    target.options.identity_files = config.identity_files;
    target.identity_files_explicit = true;
  }
  target.identities_only = config.identities_only;

  // --known-hosts names the one file to use.
  if (!m_options.known_hosts.empty()) {
    target.known_hosts_files = {m_options.known_hosts};
  } else {
    target.known_hosts_files = config.user_known_hosts_files;
    if (target.known_hosts_files.empty()) {
      target.known_hosts_files.push_back(local_token_values("").home + "/.ssh/known_hosts");
    }
    for (const std::string& file : config.global_known_hosts_files) {
      target.known_hosts_files.push_back(file);
    }
  }
  target.options.known_hosts = target.known_hosts_files.front();
  target.host_key_checking =
      m_options.accept_new_host_keys ? HostKeyChecking::accept_new : config.host_key_checking;

  if (m_options.use_agent && m_options.agent_socket.empty() && config.identity_agent) {
    const std::string& agent = *config.identity_agent;
    if (agent == "none") {
      target.options.use_agent = false;
    } else if (agent != "SSH_AUTH_SOCK") {
      target.options.agent_socket = agent;
    }
  }
  if (config.connect_timeout) target.options.connect_timeout = *config.connect_timeout;
  if (config.server_alive_interval > 0) {
    target.options.keepalive_interval = std::chrono::seconds(config.server_alive_interval);
    target.options.keepalive_count_max = config.server_alive_count_max;
  }
  target.batch_mode = config.batch_mode;
  target.compression = config.compression;
  return target;
}

Status SshContext::route(const SshHostConfig& config, int depth,
                         std::vector<ssh::HostTarget>& hops) {
  if (config.proxy_jump.empty()) return Status();
  if (depth >= k_max_jump_depth) {
    return {ErrorKind::connect,
            fmt::format("{}: more than {} jump hosts in a row: is there a ProxyJump loop in "
                        "the ssh configuration?",
                        config.alias, k_max_jump_depth)};
  }
  for (size_t i = 0; i < config.proxy_jump.size(); ++i) {
    const std::string& hop = config.proxy_jump[i];
    std::optional<SshQuery> query = parse_jump_hop(hop);
    if (!query) {
      return {ErrorKind::connect,
              fmt::format("{}: ProxyJump hop \"{}\" is not [user@]host[:port]; fix it in the "
                          "ssh configuration",
                          config.alias, hop)};
    }
    const Result<SshHostConfig>& answer = lookup(*query);
    if (!answer) {
      return {ErrorKind::connect, fmt::format("{}: its jump host {} cannot be resolved: {}",
                                              config.alias, hop, answer.status().message())};
    }
    // Like `ssh -J a,b`: only the first hop's own ProxyJump (or
    // ProxyCommand) applies; the others are reached through the one before.
    if (i == 0) {
      if (Status routed = route(*answer, depth + 1, hops); !routed.ok()) return routed;
      if (Status usable = proxy_supported(*answer, hop); !usable.ok()) return usable;
    }
    ssh::HostTarget target = make_target(*answer);
    if (i > 0) target.proxy_command.clear();
    target.host = -1;
    hops.push_back(std::move(target));
  }
  return Status();
}

Result<ssh::HostTarget> SshContext::target_for(int host, const HostAddress& address) {
  const Result<SshHostConfig>& answer = lookup(query_of(address));
  if (!answer) {
    const Status& problem = answer.status();
    std::string where = problem.file().empty() ? std::string()
                        : problem.line() > 0
                            ? fmt::format(" ({}:{})", problem.file(), problem.line())
                            : fmt::format(" ({})", problem.file());
    return Status{ErrorKind::connect, fmt::format("{}: its ssh configuration cannot be used{}: {}",
                                                  address.host, where, problem.message())};
  }
  const SshHostConfig& config = *answer;
  if (Status usable = proxy_supported(config, address.host); !usable.ok()) return usable;
  ssh::HostTarget target = make_target(config);
  target.host = host;
  if (Status routed = route(config, 0, target.jumps); !routed.ok()) return routed;
  return target;
}

std::shared_ptr<ssh::JumpLink> SshContext::jump_link(const std::vector<ssh::HostTarget>& jumps,
                                                     size_t count) {
  if (count == 0) return nullptr;
  std::string key;
  for (size_t i = 0; i < count; ++i) {
    key +=
        fmt::format("{}{}@{}:{}", i ? " -> " : "", jumps[i].user, jumps[i].hostname, jumps[i].port);
  }
  std::shared_ptr<ssh::JumpLink> link = m_links[key].lock();
  if (link && !link->failed()) return link;
  link = std::make_shared<ssh::JumpLink>(jumps[count - 1], jump_link(jumps, count - 1));
  m_links[key] = link;
  return link;
}

bool SshContext::enter_handshake(const std::string& server) {
  Server& entry = m_servers[server];
  if (entry.limit == 0) entry.limit = k_handshakes_per_server;
  Clock::time_point now = m_options.clock();
  std::erase_if(entry.settling, [&](Clock::time_point until) { return until <= now; });
  if (entry.in_flight + static_cast<int>(entry.settling.size()) >= entry.limit) return false;
  ++entry.in_flight;
  return true;
}

void SshContext::leave_handshake(const std::string& server) {
  Server& entry = m_servers[server];
  if (entry.in_flight > 0) --entry.in_flight;
  if (entry.limit > 0 && entry.limit < k_handshakes_per_server) {
    entry.settling.push_back(m_options.clock() + k_handshake_settling);
  }
}

void SshContext::handshake_refused(const std::string& server) {
  Server& entry = m_servers[server];
  if (entry.limit == 0) entry.limit = k_handshakes_per_server;
  // The refused one was one too many.
  entry.limit = std::max(1, std::min(entry.limit, entry.in_flight - 1));
}

bool SshContext::can_ask_passphrase() const {
  return m_options.ask_passphrase || isatty(STDIN_FILENO);
}

std::optional<std::string> SshContext::passphrase(const std::string& key) {
  Passphrase& entry = m_passphrases[key];
  if (entry.value) return entry.value;
  if (entry.asked >= k_passphrase_prompts || m_prompts_refused) return std::nullopt;
  ++entry.asked;
  Clock::time_point asked_at = m_options.clock();
  if (m_options.before_prompt) m_options.before_prompt();
  entry.value = m_options.ask_passphrase ? m_options.ask_passphrase(key) : ask_on_terminal(key);
  m_time_in_prompts += m_options.clock() - asked_at;
  // End of input or an interrupt at the prompt: ask no more in this run.
  if (!entry.value) m_prompts_refused = true;
  return entry.value;
}

void SshContext::passphrase_failed(const std::string& key, const std::string& passphrase) {
  Passphrase& entry = m_passphrases[key];
  if (entry.value == passphrase) entry.value.reset();
}

}  // namespace runner
