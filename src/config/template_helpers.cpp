// Template values and helpers. The case helpers follow the Rust Inflector
// crate that handlebars_misc_helpers uses; the comparisons follow the
// handlebars crate (a string and a number compare as numbers when the
// string is one, and are never equal). ASCII letters only change case.
#include "template_helpers.h"

#include <algorithm>
#include <cmath>
#include <compare>
#include <cstdlib>
#include <optional>

namespace runner {

TemplateValue TemplateValue::of_string(std::string text) {
  TemplateValue value;
  value.kind = Kind::string;
  value.text = std::move(text);
  return value;
}

TemplateValue TemplateValue::of_bool(bool boolean) {
  TemplateValue value;
  value.kind = Kind::boolean;
  value.boolean = boolean;
  return value;
}

TemplateValue TemplateValue::of_number(std::string text) {
  TemplateValue value;
  value.kind = Kind::number;
  value.number = std::strtod(text.c_str(), nullptr);
  value.text = std::move(text);
  return value;
}

std::string TemplateValue::to_string() const {
  switch (kind) {
    case Kind::null:
      return "";
    case Kind::boolean:
      return boolean ? "true" : "false";
    case Kind::number:
    case Kind::string:
      return text;
  }
  return "";
}

bool TemplateValue::truthy() const {
  switch (kind) {
    case Kind::null:
      return false;
    case Kind::boolean:
      return boolean;
    case Kind::number:
      return std::isnormal(number);
    case Kind::string:
      return !text.empty();
  }
  return false;
}

namespace {

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Bytes of UTF-8 sequences count as letters, so they are never separators.
bool is_word_char(char c) {
  return is_lower(c) || is_upper(c) || is_digit(c) || static_cast<unsigned char>(c) >= 0x80;
}
char lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
char upper(char c) { return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c; }

std::string_view trim_end_separators(std::string_view text) {
  while (!text.empty() && !is_word_char(text.back())) text.remove_suffix(1);
  return text;
}

// snake_case and kebab-case: words split at separators and where an upper
// case letter meets a lower case one, joined by `joiner`, all lower case.
std::string join_words(std::string_view input, char joiner) {
  std::string_view text = trim_end_separators(input);
  std::string out;
  bool word_start = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!is_word_char(c)) {
      if (!word_start) out += joiner;
      word_start = true;
      continue;
    }
    bool next_lower = i + 1 < input.size() && is_lower(input[i + 1]);
    bool previous_lower = i > 0 && is_lower(input[i - 1]);
    if (!word_start && is_upper(c) && (next_lower || previous_lower)) out += joiner;
    out += lower(c);
    word_start = false;
  }
  return out;
}

// camelCase: the first letter lower case, each later word's first upper.
std::string camel_case(std::string_view input) {
  std::string_view text = trim_end_separators(input);
  std::string out;
  bool new_word = false;
  bool started = false;
  char last = ' ';
  for (char c : text) {
    if (!is_word_char(c)) {
      new_word = started;
      continue;
    }
    started = true;
    if (is_digit(c)) {
      new_word = true;
      out += c;
    } else if (new_word || (is_lower(last) && is_upper(c))) {
      new_word = false;
      out += upper(c);
    } else {
      last = c;
      out += lower(c);
    }
  }
  return out;
}

std::string map_chars(std::string text, char (*f)(char)) {
  std::transform(text.begin(), text.end(), text.begin(), f);
  return text;
}

std::string replace_all(std::string value, const std::string& from, const std::string& to) {
  if (from.empty()) return value;
  std::size_t pos = 0;
  while ((pos = value.find(from, pos)) != std::string::npos) {
    value.replace(pos, from.size(), to);
    pos += to.size();
  }
  return value;
}

std::string trim(const std::string& text) {
  const char* k_space = " \t\n\r\f\v";
  std::size_t first = text.find_first_not_of(k_space);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(k_space) - first + 1);
}

std::optional<double> as_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

using Kind = TemplateValue::Kind;

// How two values order, or nothing when they do not compare.
std::optional<std::partial_ordering> compare(const TemplateValue& a, const TemplateValue& b) {
  if (a.kind == Kind::number && b.kind == Kind::number) return a.number <=> b.number;
  if (a.kind == Kind::string && b.kind == Kind::string) return a.text <=> b.text;
  if (a.kind == Kind::boolean && b.kind == Kind::boolean) return a.boolean <=> b.boolean;
  if (a.kind == Kind::number && b.kind == Kind::string) {
    if (auto number = as_number(b.text)) return a.number <=> *number;
  }
  if (a.kind == Kind::string && b.kind == Kind::number) {
    if (auto number = as_number(a.text)) return *number <=> b.number;
  }
  return std::nullopt;
}

bool equal(const TemplateValue& a, const TemplateValue& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Kind::null) return true;
  return compare(a, b) == std::partial_ordering::equivalent;
}

using Args = std::vector<TemplateValue>;

template <bool (*test)(std::partial_ordering)>
TemplateValue ordered(const Args& args) {
  auto order = compare(args[0], args[1]);
  return TemplateValue::of_bool(order && test(*order));
}

template <std::string (*f)(const std::string&)>
TemplateValue on_text(const Args& args) {
  return TemplateValue::of_string(f(args[0].to_string()));
}

std::string to_upper_case(const std::string& text) { return map_chars(text, upper); }
std::string to_lower_case(const std::string& text) { return map_chars(text, lower); }
std::string to_snake_case(const std::string& text) { return join_words(text, '_'); }
std::string to_kebab_case(const std::string& text) { return join_words(text, '-'); }
std::string to_camel_case(const std::string& text) { return camel_case(text); }

constexpr std::size_t k_any = static_cast<std::size_t>(-1);

constexpr TemplateHelper k_helpers[] = {
    {"replace", 3, 3,
     [](const Args& a) {
       return TemplateValue::of_string(
           replace_all(a[0].to_string(), a[1].to_string(), a[2].to_string()));
     }},
    {"to_upper_case", 1, 1, on_text<to_upper_case>},
    {"to_lower_case", 1, 1, on_text<to_lower_case>},
    {"trim", 1, 1, on_text<trim>},
    {"to_snake_case", 1, 1, on_text<to_snake_case>},
    {"to_kebab_case", 1, 1, on_text<to_kebab_case>},
    {"to_camel_case", 1, 1, on_text<to_camel_case>},
    {"eq", 2, 2, [](const Args& a) { return TemplateValue::of_bool(equal(a[0], a[1])); }},
    {"ne", 2, 2, [](const Args& a) { return TemplateValue::of_bool(!equal(a[0], a[1])); }},
    {"gt", 2, 2, ordered<std::is_gt>},
    {"gte", 2, 2, ordered<std::is_gteq>},
    {"lt", 2, 2, ordered<std::is_lt>},
    {"lte", 2, 2, ordered<std::is_lteq>},
    {"and", 2, k_any,
     [](const Args& a) {
       return TemplateValue::of_bool(
           std::all_of(a.begin(), a.end(), [](const TemplateValue& v) { return v.truthy(); }));
     }},
    {"or", 2, k_any,
     [](const Args& a) {
       return TemplateValue::of_bool(
           std::any_of(a.begin(), a.end(), [](const TemplateValue& v) { return v.truthy(); }));
     }},
    {"not", 1, 1, [](const Args& a) { return TemplateValue::of_bool(!a[0].truthy()); }},
};

constexpr std::string_view k_block_helpers[] = {"if", "unless", "each", "with"};

}  // namespace

const TemplateHelper* find_helper(std::string_view name) {
  for (const TemplateHelper& helper : k_helpers)
    if (helper.name == name) return &helper;
  return nullptr;
}

bool is_block_helper(std::string_view name) {
  return std::find(std::begin(k_block_helpers), std::end(k_block_helpers), name) !=
         std::end(k_block_helpers);
}

std::string_view helper_like(std::string_view name) {
  constexpr std::size_t k_shortest = 3;
  if (name.size() < k_shortest) return "";
  for (const TemplateHelper& helper : k_helpers)
    if (helper.name.find(name) != std::string_view::npos ||
        (helper.name.size() >= k_shortest && name.find(helper.name) != std::string_view::npos))
      return helper.name;
  return "";
}

std::string helper_names() {
  std::string names;
  for (const TemplateHelper& helper : k_helpers)
    names += (names.empty() ? "" : ", ") + std::string(helper.name);
  return names;
}

}  // namespace runner
