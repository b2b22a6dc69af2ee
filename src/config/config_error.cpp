#include "runner/config/config_error.h"

namespace runner {

ConfigError::ConfigError(std::string file, int line, int column, const std::string& message)
    : std::runtime_error(Status::at(file, line, column, message).located_message()),
      m_file(std::move(file)),
      m_line(line),
      m_column(column),
      m_detail(message) {}

ConfigError::ConfigError(const std::string& message)
    : std::runtime_error(message), m_detail(message) {}

ConfigError::ConfigError(const Status& failure)
    : std::runtime_error(failure.located_message()),
      m_file(failure.file()),
      m_line(failure.line()),
      m_column(failure.column()),
      m_detail(failure.message()) {}

}  // namespace runner
