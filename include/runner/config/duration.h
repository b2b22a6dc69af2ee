// Durations as users write them in queue.yaml and on the command line:
// "90s", "2h", "1h30m", "500ms", "1d", or a bare number of seconds. Pure.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace runner {

// nullopt for anything else (negative, empty, unknown unit, overflow).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace runner
