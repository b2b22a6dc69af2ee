// The debug log's two sinks: stderr at the chosen verbosity, and a run's
// rotating file at every level (spdlog's rotating file sink).
#include "runner/core/debug_log.h"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>

namespace runner::debug_log {

namespace {

struct Sinks {
  int console_verbosity = 0;
  std::shared_ptr<spdlog::logger> console;
  std::shared_ptr<spdlog::logger> file;
};

Sinks& sinks() {
  static Sinks instance;
  return instance;
}

spdlog::level::level_enum spdlog_level(Level level) {
  return level == Level::step ? spdlog::level::info : spdlog::level::debug;
}

}  // namespace

void set_console_verbosity(int verbosity) {
  Sinks& all = sinks();
  all.console_verbosity = verbosity;
  if (verbosity <= 0) {
    all.console.reset();
    return;
  }
  if (!all.console) {
    all.console = std::make_shared<spdlog::logger>(
        "runner-console", std::make_shared<spdlog::sinks::stderr_sink_st>());
    all.console->set_pattern("runner: %H:%M:%S.%e %v");
  }
  all.console->set_level(verbosity >= 2 ? spdlog::level::debug : spdlog::level::info);
}

int verbosity_from_environment() {
  const char* value = std::getenv("RUNNER_LOG");
  if (!value) return 0;
  std::string_view text(value);
  if (text == "debug" || text == "trace") return 2;
  if (text == "info") return 1;
  return 0;
}

Status open_file(const std::string& path) {
  try {
    auto sink =
        std::make_shared<spdlog::sinks::rotating_file_sink_st>(path, k_file_bytes, k_kept_files);
    auto logger = std::make_shared<spdlog::logger>("runner-file", std::move(sink));
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %L %v");
    // Steps always; details only when the console shows them too, so that
    // a run pays for no detail it did not ask for.
    logger->set_level(spdlog::level::debug);
    logger->flush_on(spdlog::level::debug);
    sinks().file = std::move(logger);
    return Status::ok_status();
  } catch (const spdlog::spdlog_ex& e) {
    return Status::error(fmt::format("cannot write the debug log {}: {}", path, e.what()));
  }
}

void close_file() { sinks().file.reset(); }

bool wanted(Level level) {
  const Sinks& all = sinks();
  return all.console_verbosity >= static_cast<int>(level) || (all.file && level == Level::step);
}

void write(Level level, std::string_view message) {
  Sinks& all = sinks();
  try {
    if (all.console && all.console_verbosity >= static_cast<int>(level)) {
      all.console->log(spdlog_level(level), "{}", message);
    }
    if (all.file) all.file->log(spdlog_level(level), "{}", message);
  } catch (const spdlog::spdlog_ex&) {
    // A debug line that cannot be written is dropped: the log is no reason
    // to stop a run.
  }
}

}  // namespace runner::debug_log
