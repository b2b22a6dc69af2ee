// `~` and `~/...` in a path a user wrote (an ssh configuration, runner's own
// config file), as a shell would expand them.
#pragma once

#include <string>

namespace runner {

inline std::string expand_tilde(const std::string& path, const std::string& home) {
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return home + path.substr(1);
  return path;
}

}  // namespace runner
