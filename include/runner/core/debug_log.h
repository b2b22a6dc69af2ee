// The debug log: the steps runner takes with hosts (the resolved
// configuration, TCP, the handshake, the host key, each authentication
// method tried and why it failed, channels, launchers) and the reasons
// behind a run's decisions (a job put back, run again, or waiting). A run
// writes the steps to debug.log in its state directory, capped and rotated
// (details too with -vv). `-v` (steps) and `-vv` (details too), or
// RUNNER_LOG=info|debug, print them on stderr as well; without either the
// console is as it was. Single-threaded, like the event loop that writes it.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

#include "runner/core/status.h"

namespace runner::debug_log {

// How much a line tells: a step (-v) or a detail of one (-vv).
enum class Level { step = 1, detail = 2 };

// A rotated file's size limit, and how many earlier files are kept.
inline constexpr size_t k_file_bytes = 4 * 1024 * 1024;
inline constexpr size_t k_kept_files = 2;

// What stderr shows: 0 nothing, 1 steps, 2 details too.
void set_console_verbosity(int verbosity);
// What RUNNER_LOG asks stderr to show (`info`: 1, `debug`: 2), else 0.
int verbosity_from_environment();
// From now on every line also goes into `path`, at most k_file_bytes, then
// `path` becomes `path.1` (and so on) and a new one is begun.
[[nodiscard]] Status open_file(const std::string& path);
void close_file();

// Whether a line of `level` would be written anywhere.
bool wanted(Level level);
void write(Level level, std::string_view message);

template <typename... Args>
void step(fmt::format_string<Args...> format, Args&&... args) {
  if (wanted(Level::step)) write(Level::step, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void detail(fmt::format_string<Args...> format, Args&&... args) {
  if (wanted(Level::detail)) write(Level::detail, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace runner::debug_log
