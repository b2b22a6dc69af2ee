#include "runner/config/duration.h"

#include <cctype>
#include <charconv>

namespace runner {

namespace {

// Milliseconds per unit, or 0 for an unknown unit.
long long unit_ms(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s" || unit.empty()) return 1000;
  if (unit == "m" || unit == "min") return 60'000;
  if (unit == "h") return 3'600'000;
  if (unit == "d") return 86'400'000;
  return 0;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  long long total = 0;
  bool bare_number_seen = false;
  while (!text.empty()) {
    long long value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end == text.data() || value < 0) return std::nullopt;
    text.remove_prefix(end - text.data());
    std::size_t letters = 0;
    while (letters < text.size() && std::isalpha(static_cast<unsigned char>(text[letters])))
      ++letters;
    std::string_view unit = text.substr(0, letters);
    text.remove_prefix(letters);
    if (unit.empty()) {
      // A number without a unit is seconds, and only alone ("90").
      if (bare_number_seen || !text.empty() || total != 0) return std::nullopt;
      bare_number_seen = true;
    }
    long long per = unit_ms(unit);
    if (per == 0 || value > (1LL << 53) / per) return std::nullopt;
    total += value * per;
  }
  return std::chrono::milliseconds(total);
}

}  // namespace runner
