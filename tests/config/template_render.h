// What the template tests render with: a map of variables, or none, and the
// variables most of them use.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "runner/config/template.h"

namespace runner::testing {

inline std::string render(std::string_view text, const std::map<std::string, std::string>& vars) {
  return render_template(text, [&](std::string_view name) -> std::optional<std::string> {
    auto found = vars.find(std::string(name));
    if (found == vars.end()) return std::nullopt;
    return found->second;
  });
}

// Renders with no variables at all: any recognised expression throws.
inline std::string render_plain(std::string_view text) { return render(text, {}); }

inline const std::map<std::string, std::string> k_vars = {
    {"gpu", "3"},         {"model", "meta/llama-7B"},
    {"batch-size", "8"},  {"dotted.name", "d"},
    {"under_score", "u"}, {"x1", "one"},
    {"replace", "r"},     {"empty", ""}};

}  // namespace runner::testing
