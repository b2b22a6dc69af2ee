// The parsed form of a command template: expressions, tags and the tree of
// text, outputs and blocks that parse_template builds from them. Pure.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/result.h"

namespace runner {

// What the parser and the tag reader throw, inside this area only, for a
// template that cannot render: parse_template returns it as a Status.
struct TemplateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How deep blocks (an `{{else if}}` counting as one more) and subexpressions
// may nest: deeper is a mistake, and would exhaust the stack.
constexpr std::size_t k_max_template_depth = 100;

// A value to compute: a variable path (`gpu`, `this`, `@index`, `../x`), a
// literal, or a helper call (`replace model "/" "-"`, `(eq gpu "0")`).
struct TemplateExpr {
  enum class Kind { path, string, number, literal, call };
  Kind kind = Kind::path;
  std::string text;                // the path, the string's value, the number as written,
                                   // true/false/null, or the helper's name
  std::vector<TemplateExpr> args;  // a call's arguments
};

// One tag as written in the text.
struct TemplateTag {
  enum class Kind { output, open_block, close_block, else_block, comment, raw };
  Kind kind = Kind::output;
  TemplateExpr expr;         // output, open_block, else_block (`else if x`)
  std::string name;          // close_block: the helper; raw: the body
  std::string_view source;   // the whole tag as written
  bool trim_before = false;  // `{{~`: strips the whitespace before the tag
  bool trim_after = false;   // `~}}`: strips the whitespace after it
  std::size_t end = 0;       // offset just past the tag
};

// Reads the tag whose opener (`{{`, `{{{`, `<<`, a raw block's `{{{{`) is at
// `pos`; nullopt when the text there is not a tag, and so is shell text.
// Inside shell arithmetic a `<<` tag is a plain `<<name>>` or none. Throws
// TemplateError for subexpressions nested deeper than k_max_template_depth.
std::optional<TemplateTag> read_tag(std::string_view text, std::size_t pos, bool in_arithmetic);

// Whether `tag` is `<<name>>`, `{{ name }}`: one variable, no helper, no
// `this`, `@index` or `../`, no `~`.
bool is_plain_variable(const TemplateTag& tag);

// A piece of a parsed template.
struct TemplateNode {
  enum class Kind { text, output, block };
  Kind kind = Kind::text;
  std::string text;   // text: rendered as it is
  TemplateExpr expr;  // output: its value; block: the helper call
  // output: a `<<name>>` that is shell text (a shift, a heredoc) unless
  // `name` is a variable; `text` holds it as written.
  bool shell_unless_defined = false;
  std::vector<TemplateNode> body;     // block: rendered when it holds
  std::vector<TemplateNode> inverse;  // block: after `{{else}}`
};

// Parses a template. A failure for an unknown helper, a wrong number of
// arguments, unbalanced blocks, or nesting deeper than k_max_template_depth.
Result<std::vector<TemplateNode>> parse_template(std::string_view text);

}  // namespace runner
