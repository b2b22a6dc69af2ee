// Command templates: `<<name>>` and Pegasus' `{{ name }}`, plus the
// Handlebars helper `replace` in both syntaxes:
//   {{ replace model "/" "--" }}   <<replace model "/" "--">>
// Whitespace inside `{{ }}` is ignored; an angle expression touches its
// delimiters. No HTML escaping. Text that is not a well-formed template
// expression (heredocs, shell arithmetic) is left as it is; `\<<x>>` and
// `\{{x}}` keep an expression as written.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace runner {

// Returns a variable's value, or nullopt if it is not defined.
using VariableLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Thrown by render_template for a variable the lookup does not know.
struct UndefinedVariable {
  std::string name;
};

// Every variable name the template references, in order of first use,
// without duplicates (including the variable argument of `replace`).
std::vector<std::string> template_variables(std::string_view text);

// Substitutes every expression. Throws UndefinedVariable.
std::string render_template(std::string_view text, const VariableLookup& lookup);

}  // namespace runner
