// Defaults a user sets once for the flags they repeat, in
// ${XDG_CONFIG_HOME:-~/.config}/runner/config.yaml:
//
//   hosts_file: ~/lab/hosts.yaml
//   queue_file: ~/lab/queue.yaml
//   ssh_config: ~/lab/ssh_config
//   known_hosts: ~/lab/known_hosts
//
// The environment (RUNNER_HOSTS_FILE, ...) wins over the file, and the
// command line over both. `~/` is the home directory; a relative path is
// taken from the current directory, as on the command line.
#pragma once

#include <optional>
#include <string>

namespace runner {

struct UserDefaults {
  std::optional<std::string> hosts_file;
  std::optional<std::string> queue_file;
  std::optional<std::string> ssh_config;
  std::optional<std::string> known_hosts;
};

// Where the file is looked for (it need not exist).
std::string user_defaults_path();

// The file's defaults; none when it does not exist. Throws ConfigError, with
// the file and line, for a file that does not parse or a key it does not know.
UserDefaults load_user_defaults(const std::string& path);

}  // namespace runner
