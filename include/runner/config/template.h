// Command templates: the Handlebars language Pegasus renders (through the
// Rust handlebars crate with handlebars_misc_helpers), in Pegasus' `{{ }}`
// and in runner's `<<...>>` syntax: variables, helpers, blocks, comments.
// Whitespace inside `{{ }}` is ignored; an angle expression touches its
// delimiters. No HTML escaping. Text that is not a well-formed tag
// (heredocs, shell arithmetic, JSON) is left as it is; so is a `<<name>>`
// after an operand inside `$(( ))` or before a line `name` (a shift, a
// heredoc) when `name` is not a variable. `\{{` is `{{`, whatever follows;
// `\<<x>>` keeps a tag as written.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace runner {

// Returns a variable's value, or nullopt if it is not defined.
using VariableLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Thrown by render_template for a variable the lookup does not know.
struct UndefinedVariable : std::runtime_error {
  explicit UndefinedVariable(std::string variable)
      : std::runtime_error("<<" + variable + ">> is not defined"), name(std::move(variable)) {}
  std::string name;
};

// Thrown for a template that cannot render whatever the variables hold (an
// unknown helper, a block left open); the message names the expression and
// the fix.
struct TemplateError : std::runtime_error {
  explicit TemplateError(std::string text) : std::runtime_error(text), message(std::move(text)) {}
  std::string message;
};

// Every variable name the template needs, in order of first use, without
// duplicates, in helper arguments and blocks too (not the names of
// `<<name>>` that may be shell text). Throws TemplateError.
std::vector<std::string> template_variables(std::string_view text);

// Substitutes every expression. Throws UndefinedVariable and TemplateError.
std::string render_template(std::string_view text, const VariableLookup& lookup);

}  // namespace runner
