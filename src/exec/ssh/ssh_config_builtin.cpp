// The built-in subset of ssh_config, for machines without the ssh client:
// Host and Match blocks with OpenSSH's pattern matching, Include, and the
// keywords runner uses, read into `ssh -G` form and then parsed as its
// output is, with the defaults `ssh -G` would add. Threading: none.
#include <fmt/format.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "runner/config/home_path.h"
#include "runner/exec/ssh/ssh_config.h"
#include "ssh_config_text.h"

namespace runner {

namespace {

using namespace ssh_config_text;

constexpr int k_max_include_depth = 16;

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

  Status read() {
    if (!m_source.config_file.empty()) {
      if (access(m_source.config_file.c_str(), R_OK) != 0) {
        return Status::at(m_source.config_file, 0,
                          fmt::format("cannot read the ssh config file: {}", std::strerror(errno)));
      }
      return read_file(m_source.config_file, true, true, 0);
    }
    std::string user_config = m_local.home + "/.ssh/config";
    if (access(user_config.c_str(), F_OK) == 0) {
      if (Status user = read_file(user_config, true, true, 0); !user.ok()) return user;
    }
    if (access("/etc/ssh/ssh_config", F_OK) == 0) {
      return read_file("/etc/ssh/ssh_config", false, true, 0);
    }
    return Status();
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
  Status read_file(const std::string& path, bool user_config, bool active, int depth) {
    std::ifstream in(path);
    if (!in) return Status::at(path, 0, fmt::format("cannot read it: {}", std::strerror(errno)));
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
          return Status::at(path, number, "Include nested too deeply");
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
              Status included = read_file(found.gl_pathv[i], user_config, active, depth + 1);
              if (!included.ok()) {
                globfree(&found);
                return included;
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
        return Status::at(path, number, fmt::format("Bad port '{}'", args[0]));
      }
      store(keyword, args);
    }
    return Status();
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

}  // namespace

Result<SshHostConfig> resolve_with_builtin_parser(const SshConfigSource& source,
                                                  const SshQuery& query,
                                                  const SshTokenValues& local) {
  BuiltinParser parser(source, query, local);
  if (Status parsed = parser.read(); !parsed.ok()) return parsed;
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
  Result<SshHostConfig> config = parse_ssh_g_output(text, query, local);
  if (!config) return config;
  // Known-hosts paths take tokens too.
  for (auto* files : {&config->user_known_hosts_files, &config->global_known_hosts_files}) {
    for (std::string& file : *files) {
      Result<std::string> path = expand_ssh_tokens(file, *config, local);
      if (!path) {
        return Status::error(
            fmt::format("{}: known hosts file: {}", query.host, path.status().message()));
      }
      file = *path;
    }
  }
  if (config->identity_agent)
    config->identity_agent = expand_tilde(*config->identity_agent, local.home);
  return config;
}

}  // namespace runner
