// OpenSSH client configuration per host: `ssh -G` run in parallel and its
// output parsed, token expansion for identity files, and the built-in subset
// parser for machines without the ssh client. Threading: none.
#include "runner/exec/ssh_config.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <glob.h>
#include <poll.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

extern char** environ;

namespace runner {

namespace {

// How many `ssh -G` run at once.
constexpr size_t k_parallel_lookups = 8;
constexpr int k_max_include_depth = 16;

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  size_t end = text.find_last_not_of(" \t\r\n");
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = trim(text.substr(start, end - start));
    if (!item.empty()) items.emplace_back(item);
    start = end + 1;
  }
  return items;
}

std::optional<int> parse_number(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

std::string user_home() {
  if (passwd* entry = getpwuid(getuid()); entry && entry->pw_dir && *entry->pw_dir) {
    return entry->pw_dir;
  }
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  return "/";
}

std::string local_user_name() {
  if (passwd* entry = getpwuid(getuid())) return entry->pw_name;
  if (const char* user = std::getenv("USER"); user && *user) return user;
  return "root";
}

bool is_default_identity(const std::string& path) {
  static const char* const k_defaults[] = {"id_rsa",        "id_ecdsa", "id_ecdsa_sk", "id_ed25519",
                                           "id_ed25519_sk", "id_xmss",  "id_dsa"};
  for (const char* name : k_defaults) {
    if (path == std::string("~/.ssh/") + name) return true;
  }
  return false;
}

// `ssh` prints "Pseudo-terminal will not be allocated ..." when stdin is not
// a terminal; the rest of stderr is what went wrong.
std::string meaningful_stderr(const std::string& text, SshConfigProblem& problem) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.find("Pseudo-terminal will not be allocated") != std::string::npos) {
      continue;
    }
    if (line.find("terminating, ") != std::string::npos) continue;
    // "FILE: line N: message" or "FILE line N: message"
    size_t at = line.find(" line ");
    if (problem.line == 0 && at != std::string::npos && at > 0) {
      size_t number_end = line.find(':', at + 6);
      std::optional<int> number =
          number_end == std::string::npos
              ? std::nullopt
              : parse_number(std::string_view(line).substr(at + 6, number_end - at - 6));
      if (number) {
        std::string file = line.substr(0, at);
        if (!file.empty() && file.back() == ':') file.pop_back();
        problem.file = file;
        problem.line = *number;
        lines.push_back(std::string(trim(std::string_view(line).substr(number_end + 1))));
        continue;
      }
    }
    lines.push_back(line);
  }
  std::string joined;
  for (const std::string& line : lines) joined += (joined.empty() ? "" : "; ") + line;
  return joined;
}

// ---------------------------------------------------------------------------
// Running `ssh -G`

struct Lookup {
  size_t index = 0;
  pid_t pid = -1;
  int out = -1;
  int err = -1;
  std::string out_text;
  std::string err_text;
  int spawn_error = 0;
};

void start_lookup(Lookup& lookup, const std::vector<std::string>& args) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    lookup.spawn_error = errno;
    return;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    lookup.spawn_error = errno;
    close(out_pipe[0]);
    close(out_pipe[1]);
    return;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  int rc = posix_spawnp(&lookup.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    lookup.spawn_error = rc;
    lookup.pid = -1;
    close(out_pipe[0]);
    close(err_pipe[0]);
    return;
  }
  lookup.out = out_pipe[0];
  lookup.err = err_pipe[0];
}

// Reads both pipes of every lookup until each is closed.
void drain(std::vector<Lookup*>& running) {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Lookup*, bool>> owners;
    for (Lookup* lookup : running) {
      if (lookup->out >= 0) {
        fds.push_back({lookup->out, POLLIN, 0});
        owners.emplace_back(lookup, true);
      }
      if (lookup->err >= 0) {
        fds.push_back({lookup->err, POLLIN, 0});
        owners.emplace_back(lookup, false);
      }
    }
    if (fds.empty()) return;
    if (poll(fds.data(), fds.size(), 30000) <= 0 && errno != EINTR) {
      // `ssh -G` never waits on the network; something is badly wrong.
      for (auto& [lookup, is_out] : owners) {
        int& fd = is_out ? lookup->out : lookup->err;
        if (fd >= 0) close(fd);
        fd = -1;
        if (lookup->pid > 0) kill(lookup->pid, SIGKILL);
      }
      return;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto [lookup, is_out] = owners[i];
      char buffer[8192];
      ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        (is_out ? lookup->out_text : lookup->err_text).append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        (is_out ? lookup->out : lookup->err) = -1;
      }
    }
  }
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// ---------------------------------------------------------------------------
// The built-in parser

// OpenSSH's match_pattern: * and ?, case-insensitive for host names.
bool wildcard_match(std::string_view text, std::string_view pattern) {
  size_t t = 0, p = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() &&
        (pattern[p] == '?' || std::tolower(static_cast<unsigned char>(pattern[p])) ==
                                  std::tolower(static_cast<unsigned char>(text[t])))) {
      ++t;
      ++p;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// A pattern list: false if a negated pattern matches, else true if any matches.
bool match_pattern_list(const std::string& text, const std::vector<std::string>& patterns) {
  bool matched = false;
  for (const std::string& pattern : patterns) {
    bool negated = !pattern.empty() && pattern[0] == '!';
    std::string_view body = negated ? std::string_view(pattern).substr(1) : pattern;
    if (wildcard_match(text, body)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

// Splits a config line into its keyword and arguments, honouring double
// quotes and the `Keyword=value` form.
std::vector<std::string> config_words(std::string_view line) {
  std::vector<std::string> words;
  size_t at = line.find_first_of(" \t=");
  words.emplace_back(line.substr(0, at));
  if (at == std::string_view::npos) return words;
  at = line.find_first_not_of(" \t", at);
  if (at != std::string_view::npos && line[at] == '=') ++at;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    if (at >= line.size()) break;
    std::string word;
    if (line[at] == '"') {
      ++at;
      while (at < line.size() && line[at] != '"') word += line[at++];
      ++at;
    } else {
      while (at < line.size() && line[at] != ' ' && line[at] != '\t') word += line[at++];
    }
    words.push_back(word);
  }
  return words;
}

class BuiltinParser {
 public:
  BuiltinParser(const SshConfigSource& source, const SshQuery& query, const SshTokenValues& local)
      : m_source(source), m_query(query), m_local(local) {}

  bool read(SshConfigProblem& problem) {
    if (!m_source.config_file.empty()) {
      if (access(m_source.config_file.c_str(), R_OK) != 0) {
        problem = {m_source.config_file, 0,
                   fmt::format("cannot read the ssh config file: {}", std::strerror(errno))};
        return false;
      }
      return read_file(m_source.config_file, true, true, 0, problem);
    }
    std::string user_config = m_local.home + "/.ssh/config";
    if (access(user_config.c_str(), F_OK) == 0 && !read_file(user_config, true, true, 0, problem)) {
      return false;
    }
    if (access("/etc/ssh/ssh_config", F_OK) == 0) {
      return read_file("/etc/ssh/ssh_config", false, true, 0, problem);
    }
    return true;
  }

  // The values in `ssh -G` form.
  std::string as_ssh_g_output() const {
    std::string text;
    for (const auto& [key, values] : m_values) {
      for (const std::string& value : values) text += key + " " + value + "\n";
    }
    return text;
  }

  const std::map<std::string, std::vector<std::string>>& values() const { return m_values; }

 private:
  bool read_file(const std::string& path, bool user_config, bool active, int depth,
                 SshConfigProblem& problem) {
    std::ifstream in(path);
    if (!in) {
      problem = {path, 0, fmt::format("cannot read it: {}", std::strerror(errno))};
      return false;
    }
    int number = 0;
    bool never_match = !active;
    for (std::string line; std::getline(in, line);) {
      ++number;
      std::string_view text = trim(line);
      if (text.empty() || text[0] == '#') continue;
      std::vector<std::string> words = config_words(text);
      if (words.empty()) continue;
      std::string keyword = lowercase(words[0]);
      std::vector<std::string> args(words.begin() + 1, words.end());
      if (keyword == "host") {
        active = !never_match && match_pattern_list(m_query.host, args);
        continue;
      }
      if (keyword == "match") {
        active = !never_match && match_block(args);
        continue;
      }
      if (keyword == "include") {
        if (depth >= k_max_include_depth) {
          problem = {path, number, "Include nested too deeply"};
          return false;
        }
        for (const std::string& pattern : args) {
          std::string expanded = pattern;
          if (expanded.rfind("~/", 0) == 0) expanded = m_local.home + expanded.substr(1);
          if (expanded.empty() || expanded[0] != '/') {
            expanded =
                (user_config ? m_local.home + "/.ssh/" : std::string("/etc/ssh/")) + expanded;
          }
          glob_t found{};
          if (glob(expanded.c_str(), 0, nullptr, &found) == 0) {
            for (size_t i = 0; i < found.gl_pathc; ++i) {
              bool saved = active;
              if (!read_file(found.gl_pathv[i], user_config, active, depth + 1, problem)) {
                globfree(&found);
                return false;
              }
              active = saved;
            }
          }
          globfree(&found);
        }
        continue;
      }
      if (!active || args.empty()) continue;
      if (keyword == "port" && !parse_number(args[0])) {
        problem = {path, number, fmt::format("Bad port '{}'", args[0])};
        return false;
      }
      store(keyword, args);
    }
    return true;
  }

  void store(const std::string& keyword, const std::vector<std::string>& args) {
    static const char* const k_known[] = {"hostname",
                                          "user",
                                          "port",
                                          "identityfile",
                                          "identitiesonly",
                                          "userknownhostsfile",
                                          "globalknownhostsfile",
                                          "stricthostkeychecking",
                                          "hostkeyalias",
                                          "proxyjump",
                                          "proxycommand",
                                          "connecttimeout",
                                          "serveraliveinterval",
                                          "serveralivecountmax",
                                          "identityagent",
                                          "batchmode",
                                          "proxyusefdpass",
                                          "compression"};
    if (std::find(std::begin(k_known), std::end(k_known), keyword) == std::end(k_known)) return;
    if (keyword == "identityfile") {
      m_values[keyword].push_back(args[0]);
      return;
    }
    if (m_values.count(keyword)) return;
    std::string joined;
    for (const std::string& arg : args) joined += (joined.empty() ? "" : " ") + arg;
    m_values[keyword] = {joined};
  }

  bool match_block(const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
      std::string criterion = lowercase(args[i]);
      bool negated = !criterion.empty() && criterion[0] == '!';
      if (negated) criterion.erase(0, 1);
      if (criterion == "all") {
        if (negated) return false;
        continue;
      }
      if (i + 1 >= args.size()) return false;
      std::vector<std::string> patterns = split_list(args[++i], ',');
      bool result;
      if (criterion == "host") {
        auto hostname = m_values.find("hostname");
        result = match_pattern_list(
            hostname == m_values.end() ? m_query.host : hostname->second.front(), patterns);
      } else if (criterion == "originalhost") {
        result = match_pattern_list(m_query.host, patterns);
      } else if (criterion == "user") {
        auto user = m_values.find("user");
        std::string name = !m_query.user.empty()    ? m_query.user
                           : user != m_values.end() ? user->second.front()
                                                    : m_local.local_user;
        result = match_pattern_list(name, patterns);
      } else if (criterion == "localuser") {
        result = match_pattern_list(m_local.local_user, patterns);
      } else {
        return false;  // exec, canonical, final, tagged...: not supported here
      }
      if (result == negated) return false;
    }
    return true;
  }

  const SshConfigSource& m_source;
  const SshQuery& m_query;
  const SshTokenValues& m_local;
  std::map<std::string, std::vector<std::string>> m_values;
};

std::string expand_tilde(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  return path;
}

}  // namespace

// ---------------------------------------------------------------------------

std::optional<SshQuery> parse_jump_hop(std::string_view hop) {
  std::string_view text = trim(hop);
  if (text.rfind("ssh://", 0) == 0) text.remove_prefix(6);
  SshQuery query;
  size_t at = text.rfind('@');
  if (at != std::string_view::npos) {
    query.user = std::string(text.substr(0, at));
    text.remove_prefix(at + 1);
    if (query.user.empty()) return std::nullopt;
  }
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    query.host = std::string(text.substr(1, close - 1));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return std::nullopt;
      port = rest.substr(1);
    }
  } else {
    size_t colon = text.find(':');
    query.host = std::string(text.substr(0, colon));
    if (colon != std::string_view::npos) port = text.substr(colon + 1);
    if (!port.empty() && port.back() == '/') port.remove_suffix(1);
  }
  if (query.host.empty()) return std::nullopt;
  if (!port.empty()) {
    std::optional<int> number = parse_number(port);
    if (!number || *number <= 0 || *number > 65535) return std::nullopt;
    query.port = *number;
  }
  return query;
}

std::vector<std::string> ssh_g_arguments(const SshConfigSource& source, const SshQuery& query) {
  std::vector<std::string> args = {source.ssh_program.empty() ? "ssh" : source.ssh_program, "-G"};
  if (!source.config_file.empty()) {
    args.push_back("-F");
    args.push_back(source.config_file);
  }
  if (!query.user.empty()) {
    args.push_back("-l");
    args.push_back(query.user);
  }
  if (query.port > 0) {
    args.push_back("-p");
    args.push_back(std::to_string(query.port));
  }
  // `--` keeps a host name that starts with '-' from being read as an option.
  args.push_back("--");
  args.push_back(query.host);
  return args;
}

SshTokenValues local_token_values(const std::string& home) {
  SshTokenValues values;
  values.home = home.empty() ? user_home() : home;
  values.local_user = local_user_name();
  values.uid = std::to_string(getuid());
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) values.local_host = name;
  return values;
}

std::optional<std::string> expand_ssh_tokens(std::string_view text, const SshHostConfig& config,
                                             const SshTokenValues& local, std::string& error,
                                             SshExpansion kind) {
  bool path = kind == SshExpansion::path;
  std::string out;
  size_t at = 0;
  if (path && (text == "~" || text.rfind("~/", 0) == 0)) {
    out = local.home;
    at = 1;
  }
  while (at < text.size()) {
    char c = text[at];
    if (path && c == '$' && at + 1 < text.size() && text[at + 1] == '{') {
      size_t close = text.find('}', at + 2);
      if (close == std::string_view::npos) {
        error = fmt::format("unterminated ${{ in \"{}\"", text);
        return std::nullopt;
      }
      std::string name(text.substr(at + 2, close - at - 2));
      const char* value = std::getenv(name.c_str());
      if (!value) {
        error = fmt::format("environment variable {} in \"{}\" is not set", name, text);
        return std::nullopt;
      }
      out += value;
      at = close + 1;
      continue;
    }
    if (c != '%') {
      out += c;
      ++at;
      continue;
    }
    if (at + 1 >= text.size()) {
      error = fmt::format("a lone % at the end of \"{}\"", text);
      return std::nullopt;
    }
    char token = text[at + 1];
    at += 2;
    if (!path && std::string_view("%hnpr").find(token) == std::string_view::npos) {
      error = fmt::format("the token %{} in \"{}\" is not one a command takes (%%, %h, %n, %p, %r)",
                          token, text);
      return std::nullopt;
    }
    switch (token) {
      case '%':
        out += '%';
        break;
      case 'd':
        out += local.home;
        break;
      case 'h':
        out += config.hostname;
        break;
      case 'i':
        out += local.uid;
        break;
      case 'k':
        out += config.host_key_alias.empty() ? config.hostname : config.host_key_alias;
        break;
      case 'L':
        out += local.local_host.substr(0, local.local_host.find('.'));
        break;
      case 'l':
        out += local.local_host;
        break;
      case 'n':
        out += config.alias;
        break;
      case 'p':
        out += std::to_string(config.port);
        break;
      case 'r':
        out += config.user;
        break;
      case 'u':
        out += local.local_user;
        break;
      default:
        error = fmt::format("the token %{} in \"{}\" is not supported by runner", token, text);
        return std::nullopt;
    }
  }
  return out;
}

std::optional<SshHostConfig> parse_ssh_g_output(std::string_view text, const SshQuery& query,
                                                const SshTokenValues& local,
                                                SshConfigProblem& problem) {
  SshHostConfig config;
  config.alias = query.host;
  config.hostname = query.host;
  config.user = query.user.empty() ? local.local_user : query.user;
  if (query.port > 0) config.port = query.port;
  std::vector<std::string> identity_files;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::string_view entry = trim(line);
    size_t space = entry.find(' ');
    if (space == std::string_view::npos) continue;
    std::string key = lowercase(entry.substr(0, space));
    std::string value(trim(entry.substr(space + 1)));
    auto flag = [&] { return value == "yes" || value == "true"; };
    if (key == "hostname") {
      config.hostname = value;
    } else if (key == "user") {
      config.user = value;
    } else if (key == "port") {
      std::optional<int> port = parse_number(value);
      if (!port || *port <= 0 || *port > 65535) {
        problem.message = fmt::format("{}: bad port \"{}\"", query.host, value);
        return std::nullopt;
      }
      config.port = *port;
    } else if (key == "identityfile") {
      identity_files.push_back(value);
    } else if (key == "identitiesonly") {
      config.identities_only = flag();
    } else if (key == "userknownhostsfile") {
      config.user_known_hosts_files = split_words(value);
    } else if (key == "globalknownhostsfile") {
      config.global_known_hosts_files = split_words(value);
    } else if (key == "stricthostkeychecking") {
      std::string mode = lowercase(value);
      config.host_key_checking = mode == "yes" || mode == "true" ? HostKeyChecking::yes
                                 : mode == "accept-new"          ? HostKeyChecking::accept_new
                                 : mode == "no" || mode == "false" || mode == "off"
                                     ? HostKeyChecking::no
                                     : HostKeyChecking::ask;
    } else if (key == "hostkeyalias") {
      config.host_key_alias = value;
    } else if (key == "proxyjump") {
      if (lowercase(value) != "none") config.proxy_jump = split_list(value, ',');
    } else if (key == "proxycommand") {
      if (lowercase(value) != "none") config.proxy_command = value;
    } else if (key == "proxyusefdpass") {
      config.proxy_use_fdpass = flag();
    } else if (key == "connecttimeout") {
      if (std::optional<int> seconds = parse_number(value); seconds && *seconds > 0) {
        config.connect_timeout = std::chrono::seconds(*seconds);
      }
    } else if (key == "serveraliveinterval") {
      config.server_alive_interval = parse_number(value).value_or(0);
    } else if (key == "serveralivecountmax") {
      config.server_alive_count_max = parse_number(value).value_or(3);
    } else if (key == "identityagent") {
      config.identity_agent = value;
    } else if (key == "batchmode") {
      config.batch_mode = flag();
    } else if (key == "compression") {
      config.compression = flag();
    }
  }
  if (query.port > 0) config.port = query.port;
  if (!query.user.empty()) config.user = query.user;

  config.default_identity_files =
      std::all_of(identity_files.begin(), identity_files.end(), is_default_identity);
  for (const std::string& file : identity_files) {
    std::string error;
    std::optional<std::string> path = expand_ssh_tokens(file, config, local, error);
    if (!path) {
      problem.message = fmt::format("{}: IdentityFile: {}", query.host, error);
      return std::nullopt;
    }
    config.identity_files.push_back(*path);
  }
  for (auto* files : {&config.user_known_hosts_files, &config.global_known_hosts_files}) {
    for (std::string& file : *files) file = expand_tilde(file, local.home);
  }
  if (!config.proxy_command.empty()) {
    std::string error;
    std::optional<std::string> command =
        expand_ssh_tokens(config.proxy_command, config, local, error, SshExpansion::command);
    if (!command) {
      problem.message = fmt::format("{}: ProxyCommand: {}", query.host, error);
      return std::nullopt;
    }
    config.proxy_command = *command;
  }
  return config;
}

std::optional<SshHostConfig> resolve_with_builtin_parser(const SshConfigSource& source,
                                                         const SshQuery& query,
                                                         const SshTokenValues& local,
                                                         SshConfigProblem& problem) {
  BuiltinParser parser(source, query, local);
  if (!parser.read(problem)) return std::nullopt;
  const auto& values = parser.values();
  std::string text = parser.as_ssh_g_output();

  // What `ssh -G` would add: defaults, and HostName's %h.
  auto hostname = values.find("hostname");
  if (hostname != values.end()) {
    std::string expanded;
    const std::string& raw = hostname->second.front();
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '%' && i + 1 < raw.size() && (raw[i + 1] == 'h' || raw[i + 1] == '%')) {
        expanded += raw[i + 1] == 'h' ? query.host : "%";
        ++i;
      } else {
        expanded += raw[i];
      }
    }
    text += "hostname " + expanded + "\n";
  }
  if (!values.count("identityfile")) {
    for (const char* name : {"id_rsa", "id_ecdsa", "id_ed25519"}) {
      text += std::string("identityfile ~/.ssh/") + name + "\n";
    }
  }
  if (!values.count("userknownhostsfile")) {
    text += "userknownhostsfile ~/.ssh/known_hosts ~/.ssh/known_hosts2\n";
  }
  if (!values.count("globalknownhostsfile")) {
    text += "globalknownhostsfile /etc/ssh/ssh_known_hosts /etc/ssh/ssh_known_hosts2\n";
  }
  // The parse below takes the last "hostname" line, the expanded one.
  std::optional<SshHostConfig> config = parse_ssh_g_output(text, query, local, problem);
  if (!config) return config;
  // Known-hosts paths take tokens too.
  for (auto* files : {&config->user_known_hosts_files, &config->global_known_hosts_files}) {
    for (std::string& file : *files) {
      std::string error;
      std::optional<std::string> path = expand_ssh_tokens(file, *config, local, error);
      if (!path) {
        problem.message = fmt::format("{}: known hosts file: {}", query.host, error);
        return std::nullopt;
      }
      file = *path;
    }
  }
  if (config->identity_agent)
    config->identity_agent = expand_tilde(*config->identity_agent, local.home);
  return config;
}

SshConfigResolver::SshConfigResolver(SshConfigSource source)
    : m_source(std::move(source)), m_local(local_token_values(m_source.home)) {}

std::vector<SshResolution> SshConfigResolver::resolve(const std::vector<SshQuery>& queries) {
  std::vector<SshResolution> answers(queries.size());
  std::vector<Lookup> lookups(queries.size());
  size_t next = 0;
  while (next < queries.size() && m_have_ssh.value_or(true)) {
    std::vector<Lookup*> running;
    for (; next < queries.size() && running.size() < k_parallel_lookups; ++next) {
      Lookup& lookup = lookups[next];
      lookup.index = next;
      start_lookup(lookup, ssh_g_arguments(m_source, queries[next]));
      if (lookup.pid < 0) {
        if (lookup.spawn_error == ENOENT || lookup.spawn_error == EACCES) {
          m_have_ssh = false;
          m_note = fmt::format(
              "the ssh client ({}) cannot be run ({}): reading the ssh configuration with "
              "runner's built-in parser, which understands Host, Match host/user, Include "
              "and the usual keywords; install openssh-client for full `ssh -G` resolution",
              m_source.ssh_program, std::strerror(lookup.spawn_error));
          ++next;
          break;
        }
        answers[next].problem.message = fmt::format("cannot run {}: {}", m_source.ssh_program,
                                                    std::strerror(lookup.spawn_error));
        continue;
      }
      running.push_back(&lookup);
    }
    drain(running);
    for (Lookup* lookup : running) {
      int status = wait_exit(lookup->pid);
      SshResolution& answer = answers[lookup->index];
      const SshQuery& query = queries[lookup->index];
      if (status == 0) {
        m_have_ssh = true;
        answer.config = parse_ssh_g_output(lookup->out_text, query, m_local, answer.problem);
        continue;
      }
      std::string why = meaningful_stderr(lookup->err_text, answer.problem);
      if (status == 127 || why.find("illegal option -- G") != std::string::npos ||
          why.find("unknown option -- G") != std::string::npos) {
        m_have_ssh = false;
        m_note = fmt::format(
            "{} cannot resolve the ssh configuration (`ssh -G` failed: {}): reading it with "
            "runner's built-in parser, which understands Host, Match host/user, Include and "
            "the usual keywords",
            m_source.ssh_program, why.empty() ? fmt::format("status {}", status) : why);
        continue;
      }
      answer.problem.message =
          fmt::format("the ssh configuration for {} cannot be read: {}", query.host,
                      why.empty() ? fmt::format("ssh -G exited with status {}", status) : why);
    }
  }
  if (m_have_ssh == false) {
    for (size_t i = 0; i < queries.size(); ++i) {
      if (answers[i].config || !answers[i].problem.message.empty()) continue;
      answers[i].config =
          resolve_with_builtin_parser(m_source, queries[i], m_local, answers[i].problem);
    }
  }
  return answers;
}

}  // namespace runner
