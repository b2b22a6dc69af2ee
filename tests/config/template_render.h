// What the template tests render with: a map of variables, or none, and the
// variables most of them use.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/template.h"
#include "support/value_of.h"

namespace runner::testing {

inline Result<std::string> rendering(std::string_view text,
                                     const std::map<std::string, std::string>& vars) {
  return render_template(text, [&](std::string_view name) -> std::optional<std::string> {
    auto found = vars.find(std::string(name));
    if (found == vars.end()) return std::nullopt;
    return found->second;
  });
}

// The text rendered; a failed expectation when it cannot be.
inline std::string render(std::string_view text, const std::map<std::string, std::string>& vars) {
  return value_of(rendering(text, vars));
}

// Renders with no variables at all: any recognised expression fails.
inline std::string render_plain(std::string_view text) { return render(text, {}); }

// Whether rendering `text` with `vars` fails as a variable the lookup does
// not know makes it fail.
inline bool fails_undefined(std::string_view text,
                            const std::map<std::string, std::string>& vars = {}) {
  Result<std::string> result = rendering(text, vars);
  return !result && result.status().kind() == ErrorKind::undefined;
}

// The variables `text` needs; a failed expectation when it cannot render.
inline std::vector<std::string> variables(std::string_view text) {
  return value_of(template_variables(text));
}

inline const std::map<std::string, std::string> k_vars = {
    {"gpu", "3"},         {"model", "meta/llama-7B"},
    {"batch-size", "8"},  {"dotted.name", "d"},
    {"under_score", "u"}, {"x1", "one"},
    {"replace", "r"},     {"empty", ""}};

}  // namespace runner::testing
