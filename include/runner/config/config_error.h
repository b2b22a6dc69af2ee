// The one fatal error type for bad configuration (hosts.yaml, queue.yaml,
// command-line values). It carries the file and position so `main` can print
// "queue.yaml:3:5: ..." and exit 2. Expected runtime failures (a host that
// refuses, a job that fails) are values, never this exception.
#pragma once

#include <stdexcept>
#include <string>

#include "runner/core/status.h"

namespace runner {

class ConfigError : public std::runtime_error {
 public:
  // line and column are 1-based; 0 means "not known".
  ConfigError(std::string file, int line, int column, const std::string& message);
  explicit ConfigError(const std::string& message);
  // A failure that a function returned, said with its place.
  explicit ConfigError(const Status& failure);

  const std::string& file() const { return m_file; }
  int line() const { return m_line; }
  int column() const { return m_column; }
  // What the user did wrong, without the position prefix.
  const std::string& detail() const { return m_detail; }

 private:
  std::string m_file;
  int m_line = 0;
  int m_column = 0;
  std::string m_detail;
};

}  // namespace runner
