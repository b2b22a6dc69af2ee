#include "runner/config/config_error.h"

#include <fmt/format.h>

namespace runner {

namespace {

std::string located(const std::string& file, int line, int column, const std::string& message) {
  if (file.empty()) return message;
  if (line <= 0) return fmt::format("{}: {}", file, message);
  if (column <= 0) return fmt::format("{}:{}: {}", file, line, message);
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

}  // namespace

ConfigError::ConfigError(std::string file, int line, int column, const std::string& message)
    : std::runtime_error(located(file, line, column, message)),
      m_file(std::move(file)),
      m_line(line),
      m_column(column),
      m_detail(message) {}

ConfigError::ConfigError(const std::string& message)
    : std::runtime_error(message), m_detail(message) {}

}  // namespace runner
