// The user's config file of defaults, read into UserDefaults (see user_defaults.h).
#include "user_defaults.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>

#include "runner/config/config_error.h"
#include "runner/config/home_path.h"

namespace runner {

namespace {

std::string home() {
  const char* home = std::getenv("HOME");
  return home ? home : "";
}

}  // namespace

std::string user_defaults_path() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  std::string base = xdg && *xdg ? xdg : home() + "/.config";
  return base + "/runner/config.yaml";
}

UserDefaults load_user_defaults(const std::string& path) {
  UserDefaults defaults;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return defaults;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path, e.mark.line + 1, e.mark.column + 1, e.msg);
  }
  if (root.IsNull()) return defaults;
  if (!root.IsMap())
    throw ConfigError(path, root.Mark().line + 1, root.Mark().column + 1,
                      "expected keys such as `hosts_file: ~/lab/hosts.yaml`");
  for (const auto& entry : root) {
    const YAML::Node& value = entry.second;
    int line = entry.first.Mark().line + 1;
    int column = entry.first.Mark().column + 1;
    if (!entry.first.IsScalar())
      throw ConfigError(path, line, column,
                        "this key is not a name (it is a list, a mapping or empty); the keys "
                        "are hosts_file, queue_file, ssh_config and known_hosts");
    const std::string& key = entry.first.Scalar();
    std::optional<std::string>* field = key == "hosts_file"    ? &defaults.hosts_file
                                        : key == "queue_file"  ? &defaults.queue_file
                                        : key == "ssh_config"  ? &defaults.ssh_config
                                        : key == "known_hosts" ? &defaults.known_hosts
                                                               : nullptr;
    if (!field)
      throw ConfigError(path, line, column,
                        fmt::format("unknown key `{}`; the keys are hosts_file, queue_file, "
                                    "ssh_config and known_hosts",
                                    key));
    if (!value.IsScalar() || value.Scalar().empty())
      throw ConfigError(path, line, column, fmt::format("`{}` takes a file's path", key));
    *field = expand_tilde(value.Scalar(), home());
  }
  return defaults;
}

}  // namespace runner
