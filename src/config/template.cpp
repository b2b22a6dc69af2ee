// Command templates: a small scanner that finds well-formed `<<...>>`,
// `{{ ... }}` and `{{{ ... }}}` expressions and leaves every other byte as
// it is, so shell syntax (heredocs, shifts, JSON, Go templates) passes
// through. An angle expression touches its delimiters (`<< EOF` and
// `<<EOF >>` are a heredoc), and `<<` inside `$(( ))` is a shift. A
// backslash before an expression keeps it as written. Pure and stateless.
#include "runner/config/template.h"

#include <optional>

namespace runner {

namespace {

// One parsed expression: a variable, or `replace name "from" "to"`.
struct Expression {
  std::string name;
  bool is_replace = false;
  std::string from;
  std::string to;
};

// An expression and the offset just past its closing delimiter.
struct Match {
  Expression expression;
  std::size_t end = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t'; }

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool is_name_char(char c) { return is_name_start(c) || c == '-' || c == '.'; }

// Reads expressions of one delimiter pair starting right after the opener.
class ExpressionParser {
 public:
  // A tight parser allows no whitespace next to the delimiters.
  ExpressionParser(std::string_view text, std::size_t pos, std::string_view closer, bool tight)
      : m_text(text), m_pos(pos), m_closer(closer), m_tight(tight) {}

  std::optional<Match> parse() {
    std::size_t start = m_pos;
    if (auto replace = parse_replace()) return replace;
    m_pos = start;
    return parse_variable();
  }

 private:
  std::optional<Match> parse_variable() {
    if (!skip_padding()) return std::nullopt;
    auto name = parse_name();
    if (!name) return std::nullopt;
    if (!skip_padding()) return std::nullopt;
    if (!parse_closer()) return std::nullopt;
    return Match{Expression{std::string(*name), false, {}, {}}, m_pos};
  }

  std::optional<Match> parse_replace() {
    if (!skip_padding()) return std::nullopt;
    auto helper = parse_name();
    if (!helper || *helper != "replace") return std::nullopt;
    if (skip_spaces() == 0) return std::nullopt;
    auto name = parse_name();
    if (!name) return std::nullopt;
    if (skip_spaces() == 0) return std::nullopt;
    auto from = parse_string();
    if (!from) return std::nullopt;
    if (skip_spaces() == 0) return std::nullopt;
    auto to = parse_string();
    if (!to) return std::nullopt;
    if (!skip_padding()) return std::nullopt;
    if (!parse_closer()) return std::nullopt;
    return Match{Expression{std::string(*name), true, std::move(*from), std::move(*to)}, m_pos};
  }

  // Skips the whitespace next to a delimiter; false if a tight parser met some.
  bool skip_padding() { return skip_spaces() == 0 || !m_tight; }

  std::size_t skip_spaces() {
    std::size_t start = m_pos;
    while (m_pos < m_text.size() && is_space(m_text[m_pos])) ++m_pos;
    return m_pos - start;
  }

  std::optional<std::string_view> parse_name() {
    if (m_pos >= m_text.size() || !is_name_start(m_text[m_pos])) return std::nullopt;
    std::size_t start = m_pos;
    while (m_pos < m_text.size() && is_name_char(m_text[m_pos])) ++m_pos;
    return m_text.substr(start, m_pos - start);
  }

  // A double- or single-quoted string on one line, with the JSON escapes
  // Handlebars accepts: \" \' \\ \/ \n \t \r \b \f. Any other backslash is
  // kept as written.
  std::optional<std::string> parse_string() {
    if (m_pos >= m_text.size()) return std::nullopt;
    char quote = m_text[m_pos];
    if (quote != '"' && quote != '\'') return std::nullopt;
    std::string value;
    for (std::size_t i = m_pos + 1; i < m_text.size(); ++i) {
      char c = m_text[i];
      if (c == '\n') return std::nullopt;
      if (c == quote) {
        m_pos = i + 1;
        return value;
      }
      if (c == '\\' && i + 1 < m_text.size()) {
        if (auto escaped = unescape(m_text[i + 1], quote)) {
          value += *escaped;
          ++i;
          continue;
        }
      }
      value += c;
    }
    return std::nullopt;
  }

  static std::optional<char> unescape(char c, char quote) {
    switch (c) {
      case '\\':
        return '\\';
      case '/':
        return '/';
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      default:
        return c == quote ? std::optional<char>(c) : std::nullopt;
    }
  }

  bool parse_closer() {
    if (m_text.substr(m_pos, m_closer.size()) != m_closer) return false;
    m_pos += m_closer.size();
    return true;
  }

  std::string_view m_text;
  std::size_t m_pos;
  std::string_view m_closer;
  bool m_tight;
};

// The expression starting at `pos`, if any. Inside shell arithmetic
// `<<` is a shift, never a template.
std::optional<Match> match_at(std::string_view text, std::size_t pos, bool in_arithmetic) {
  struct Delimiters {
    std::string_view opener;
    std::string_view closer;
    bool tight;
  };
  static constexpr Delimiters k_delimiters[] = {
      {"{{{", "}}}", false}, {"{{", "}}", false}, {"<<", ">>", true}};
  for (const auto& [opener, closer, tight] : k_delimiters) {
    if (text.substr(pos, opener.size()) != opener) continue;
    if (tight && in_arithmetic) continue;
    if (auto match = ExpressionParser(text, pos + opener.size(), closer, tight).parse())
      return match;
  }
  return std::nullopt;
}

// The offset just past the `))` that closes the shell arithmetic `$((`
// at `pos`, or the end of the text if it is not closed.
std::size_t arithmetic_end(std::string_view text, std::size_t pos) {
  int depth = 0;
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i + 1;
  }
  return text.size();
}

// Calls on_literal / on_expression for the pieces of `text`, in order.
template <typename OnLiteral, typename OnExpression>
void scan(std::string_view text, OnLiteral on_literal, OnExpression on_expression) {
  std::size_t literal_start = 0;
  std::size_t arithmetic_until = 0;
  std::size_t pos = 0;
  auto flush = [&](std::size_t end) {
    if (end > literal_start) on_literal(text.substr(literal_start, end - literal_start));
  };
  while (pos < text.size()) {
    char c = text[pos];
    if (pos >= arithmetic_until && text.substr(pos, 3) == "$((")
      arithmetic_until = arithmetic_end(text, pos);
    bool in_arithmetic = pos < arithmetic_until;
    std::optional<Match> match;
    if (c == '{' || c == '<') match = match_at(text, pos, in_arithmetic);
    if (c == '\\' && pos + 1 < text.size()) {
      bool doubled = text[pos + 1] == '\\';
      std::size_t at = pos + (doubled ? 2 : 1);
      if (auto escaped = match_at(text, at, in_arithmetic)) {
        flush(pos);
        if (doubled) {
          on_literal(text.substr(pos, 1));  // `\\{{x}}` is a backslash and the value
          literal_start = pos = at;
          continue;
        }
        on_literal(text.substr(at, escaped->end - at));  // `\{{x}}` is `{{x}}` as written
        literal_start = pos = escaped->end;
        continue;
      }
    }
    if (!match) {
      ++pos;
      continue;
    }
    flush(pos);
    on_expression(match->expression);
    pos = match->end;
    literal_start = pos;
  }
  flush(pos);
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

}  // namespace

std::vector<std::string> template_variables(std::string_view text) {
  std::vector<std::string> names;
  scan(
      text, [](std::string_view) {},
      [&](const Expression& expression) {
        for (const auto& name : names)
          if (name == expression.name) return;
        names.push_back(expression.name);
      });
  return names;
}

std::string render_template(std::string_view text, const VariableLookup& lookup) {
  std::string out;
  out.reserve(text.size());
  scan(
      text, [&](std::string_view literal) { out += literal; },
      [&](const Expression& expression) {
        std::optional<std::string> value = lookup(expression.name);
        if (!value) throw UndefinedVariable{expression.name};
        if (expression.is_replace)
          out += replace_all(std::move(*value), expression.from, expression.to);
        else
          out += *value;
      });
  return out;
}

}  // namespace runner
