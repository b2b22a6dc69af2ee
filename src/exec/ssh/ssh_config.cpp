// OpenSSH client configuration per host as `ssh -G` prints it: its output
// read into an SshHostConfig, with the token expansion of identity files
// and ProxyCommand; ProxyJump hops; the `ssh -G` command line. Running it is
// ssh_config_resolver.cpp, the built-in parser ssh_config_builtin.cpp.
// Threading: none.
#include "runner/exec/ssh/ssh_config.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "runner/config/home_path.h"
#include "ssh_config_text.h"

namespace runner {

namespace {

using namespace ssh_config_text;

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

}  // namespace

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

Result<std::string> expand_ssh_tokens(std::string_view text, const SshHostConfig& config,
                                      const SshTokenValues& local, SshExpansion kind) {
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
        return Status::error(fmt::format("unterminated ${{ in \"{}\"", text));
      }
      std::string name(text.substr(at + 2, close - at - 2));
      const char* value = std::getenv(name.c_str());
      if (!value) {
        return Status::error(
            fmt::format("environment variable {} in \"{}\" is not set", name, text));
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
      return Status::error(fmt::format("a lone % at the end of \"{}\"", text));
    }
    char token = text[at + 1];
    at += 2;
    if (!path && std::string_view("%hnpr").find(token) == std::string_view::npos) {
      return Status::error(fmt::format(
          "the token %{} in \"{}\" is not one a command takes (%%, %h, %n, %p, %r)", token, text));
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
        return Status::error(
            fmt::format("the token %{} in \"{}\" is not supported by runner", token, text));
    }
  }
  return out;
}

Result<SshHostConfig> parse_ssh_g_output(std::string_view text, const SshQuery& query,
                                         const SshTokenValues& local) {
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
        return Status::error(fmt::format("{}: bad port \"{}\"", query.host, value));
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
    Result<std::string> path = expand_ssh_tokens(file, config, local);
    if (!path) {
      return Status::error(
          fmt::format("{}: IdentityFile: {}", query.host, path.status().message()));
    }
    config.identity_files.push_back(*path);
  }
  for (auto* files : {&config.user_known_hosts_files, &config.global_known_hosts_files}) {
    for (std::string& file : *files) file = expand_tilde(file, local.home);
  }
  if (!config.proxy_command.empty()) {
    Result<std::string> command =
        expand_ssh_tokens(config.proxy_command, config, local, SshExpansion::command);
    if (!command) {
      return Status::error(
          fmt::format("{}: ProxyCommand: {}", query.host, command.status().message()));
    }
    config.proxy_command = *command;
  }
  return config;
}

}  // namespace runner
