// Template values and the helpers that compute them: the string helpers of
// handlebars_misc_helpers and the comparisons and logic of Handlebars, with
// the semantics Pegasus' Rust crates give them. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace runner {

// A value while rendering: a variable's text, a literal, or a result.
struct TemplateValue {
  enum class Kind { null, boolean, number, string };
  Kind kind = Kind::null;
  std::string text;  // string: the text; number: as written
  double number = 0;
  bool boolean = false;

  static TemplateValue of_string(std::string text);
  static TemplateValue of_bool(bool value);
  // A number literal as written, e.g. `-2` or `0.5`.
  static TemplateValue of_number(std::string text);

  // How it renders: a string as it is, a number as written, true/false, or
  // nothing for null.
  std::string to_string() const;
  // Handlebars' truth: false, null, 0 and "" are false; any other string
  // (also "0" and "false") is true.
  bool truthy() const;
};

// A helper that computes a value from its arguments.
struct TemplateHelper {
  std::string_view name;
  std::size_t min_args;
  std::size_t max_args;
  TemplateValue (*call)(const std::vector<TemplateValue>& args);
};

// The helper called `name`, or nullptr.
const TemplateHelper* find_helper(std::string_view name);

// Whether `name` is a block helper: if, unless, each, with.
bool is_block_helper(std::string_view name);

// A helper whose name holds `name` or is held in it (`to_upper` ->
// `to_upper_case`), to suggest for a name that is no helper; "" if none.
std::string_view helper_like(std::string_view name);

// The names of all helpers, for messages: "replace, to_upper_case, ...".
std::string helper_names();

}  // namespace runner
