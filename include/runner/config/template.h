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
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/result.h"

namespace runner {

// Returns a variable's value, or nullopt if it is not defined.
using VariableLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Every variable name the template needs, in order of first use, without
// duplicates, in helper arguments and blocks too (not the names of
// `<<name>>` that may be shell text). A failure for a template that cannot
// render whatever the variables hold (an unknown helper, a block left open),
// its message naming the expression and the fix.
Result<std::vector<std::string>> template_variables(std::string_view text);

// Substitutes every expression. A failure as template_variables's, or of
// kind `undefined` ("<<gpu>> is not defined") for the first variable the
// lookup does not know.
Result<std::string> render_template(std::string_view text, const VariableLookup& lookup);

}  // namespace runner
