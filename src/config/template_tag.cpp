// Reads one template tag: the delimiters of both syntaxes, comments, raw
// blocks, and the Handlebars expression inside. A `<<...>>` tag touches its
// delimiters, so `<< EOF` and `<<EOF >> log` stay shell text. Pure.
#include <fmt/format.h>

#include <utility>

#include "runner/config/template.h"
#include "template_syntax.h"

namespace runner {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

bool is_name_char(char c) { return is_name_start(c) || c == '-' || c == '.'; }

bool is_number(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The delimiters of one syntax.
struct Delimiters {
  std::string_view opener;
  std::string_view closer;
  bool tight;  // no whitespace next to the delimiters
};

constexpr Delimiters k_triple{"{{{", "}}}", false};
constexpr Delimiters k_brace{"{{", "}}", false};
constexpr Delimiters k_angle{"<<", ">>", true};

// Reads the inside of one tag, from just after its opener.
class TagReader {
 public:
  TagReader(std::string_view text, std::size_t pos, Delimiters delimiters)
      : m_text(text),
        m_start(pos - delimiters.opener.size()),
        m_pos(pos),
        m_delimiters(delimiters) {}

  std::optional<TemplateTag> read(bool blocks_allowed) {
    TemplateTag tag;
    tag.trim_before = peek('~');
    if (tag.trim_before) ++m_pos;
    if (!skip_padding()) return std::nullopt;
    if (blocks_allowed && peek('!')) return read_comment(std::move(tag));
    if (blocks_allowed && peek('#')) {
      ++m_pos;
      tag.kind = TemplateTag::Kind::open_block;
    } else if (blocks_allowed && peek('/')) {
      ++m_pos;
      auto name = read_name();
      if (!name) return std::nullopt;
      tag.kind = TemplateTag::Kind::close_block;
      tag.name = std::string(*name);
      return finish(std::move(tag));
    }
    auto expr = read_expression();
    if (!expr) return std::nullopt;
    // `1<<2>>1` is a shift, in any language.
    if (m_delimiters.tight && is_number(expr->text)) return std::nullopt;
    if (blocks_allowed && tag.kind == TemplateTag::Kind::output && expr->text == "else")
      tag.kind = TemplateTag::Kind::else_block;  // `{{else}}`, or `{{else if x}}`
    tag.expr = std::move(*expr);
    return finish(std::move(tag));
  }

 private:
  // `{{! ... }}` on one line, or `{{!-- ... --}}` across lines.
  std::optional<TemplateTag> read_comment(TemplateTag tag) {
    tag.kind = TemplateTag::Kind::comment;
    bool long_form = m_text.substr(m_pos, 3) == "!--";
    std::string closer = (long_form ? "--" : "") + std::string(m_delimiters.closer);
    std::size_t found = m_text.find(closer, m_pos + (long_form ? 3 : 1));
    if (found == std::string_view::npos) return std::nullopt;
    if (!long_form && m_text.substr(m_pos, found - m_pos).find('\n') != std::string_view::npos)
      return std::nullopt;
    tag.end = found + closer.size();
    return tag;
  }

  std::optional<TemplateTag> finish(TemplateTag tag) {
    if (!skip_padding()) return std::nullopt;
    tag.trim_after = peek('~');
    if (tag.trim_after) ++m_pos;
    if (m_text.substr(m_pos, m_delimiters.closer.size()) != m_delimiters.closer)
      return std::nullopt;
    tag.end = m_pos + m_delimiters.closer.size();
    return tag;
  }

  // A helper call or a path: a name, then arguments each after whitespace.
  std::optional<TemplateExpr> read_expression() {
    auto head = read_path();
    if (!head) return std::nullopt;
    TemplateExpr expr;
    expr.text = std::string(*head);
    while (true) {
      std::size_t before = m_pos;
      if (skip_spaces() == 0 || at_end_of_expression()) {
        m_pos = before;
        break;
      }
      auto arg = read_argument();
      if (!arg) return std::nullopt;
      expr.args.push_back(std::move(*arg));
    }
    if (!expr.args.empty()) expr.kind = TemplateExpr::Kind::call;
    return expr;
  }

  bool at_end_of_expression() const {
    std::size_t closer = peek('~') ? m_pos + 1 : m_pos;
    return m_pos >= m_text.size() || peek(')') ||
           m_text.substr(closer, m_delimiters.closer.size()) == m_delimiters.closer;
  }

  std::optional<TemplateExpr> read_argument() {
    TemplateExpr arg;
    if (peek('(')) {
      ++m_pos;
      skip_spaces();
      if (++m_depth > k_max_template_depth) fail_too_deep();
      auto inner = read_expression();
      --m_depth;
      if (!inner) return std::nullopt;
      skip_spaces();
      if (!peek(')')) return std::nullopt;
      ++m_pos;
      return inner;
    }
    if (peek('"') || peek('\'')) {
      auto value = read_string();
      if (!value) return std::nullopt;
      arg.kind = TemplateExpr::Kind::string;
      arg.text = std::move(*value);
      return arg;
    }
    if (auto number = read_number()) {
      arg.kind = TemplateExpr::Kind::number;
      arg.text = std::string(*number);
      return arg;
    }
    auto path = read_path();
    if (!path) return std::nullopt;
    arg.text = std::string(*path);
    if (arg.text == "true" || arg.text == "false" || arg.text == "null")
      arg.kind = TemplateExpr::Kind::literal;
    return arg;
  }

  // `-12`, `3.5`: digits ending where the argument ends.
  std::optional<std::string_view> read_number() {
    std::size_t i = m_pos;
    if (i < m_text.size() && m_text[i] == '-') ++i;
    std::size_t digits = i;
    while (i < m_text.size() && is_digit(m_text[i])) ++i;
    if (i == digits) return std::nullopt;
    if (i + 1 < m_text.size() && m_text[i] == '.' && is_digit(m_text[i + 1])) {
      ++i;
      while (i < m_text.size() && is_digit(m_text[i])) ++i;
    }
    std::size_t start = m_pos;
    std::size_t saved = m_pos;
    m_pos = i;
    if (i < m_text.size() && !is_space(m_text[i]) && !at_end_of_expression()) {
      m_pos = saved;
      return std::nullopt;
    }
    return m_text.substr(start, i - start);
  }

  // A name, `this`, `.`, `@index`, or a name behind `../`.
  std::optional<std::string_view> read_path() {
    std::size_t start = m_pos;
    while (m_text.substr(m_pos, 3) == "../") m_pos += 3;
    if (peek('@')) ++m_pos;
    if (m_pos == start && peek('.') && m_pos + 1 < m_text.size() &&
        !is_name_char(m_text[m_pos + 1])) {
      ++m_pos;
      return m_text.substr(start, 1);
    }
    auto name = read_name();
    if (!name) {
      m_pos = start;
      return std::nullopt;
    }
    return m_text.substr(start, m_pos - start);
  }

  std::optional<std::string_view> read_name() {
    if (m_pos >= m_text.size() || !is_name_start(m_text[m_pos])) return std::nullopt;
    std::size_t start = m_pos;
    while (m_pos < m_text.size() && is_name_char(m_text[m_pos])) ++m_pos;
    return m_text.substr(start, m_pos - start);
  }

  // A double- or single-quoted string on one line, with the JSON escapes
  // Handlebars accepts: \" \' \\ \/ \n \t \r \b \f. Any other backslash is
  // kept as written.
  std::optional<std::string> read_string() {
    char quote = m_text[m_pos];
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

  [[noreturn]] void fail_too_deep() const {
    constexpr std::size_t k_shown = 30;
    throw TemplateError{fmt::format(
        "`{}...`: subexpressions are nested too deeply here (more than {} levels); a condition "
        "needs a few: remove the extra nesting",
        m_text.substr(m_start, k_shown), k_max_template_depth)};
  }

  bool peek(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }

  // Skips the whitespace next to a delimiter; false if a tight tag has some.
  bool skip_padding() { return skip_spaces() == 0 || !m_delimiters.tight; }

  std::size_t skip_spaces() {
    std::size_t start = m_pos;
    while (m_pos < m_text.size() && is_space(m_text[m_pos])) ++m_pos;
    return m_pos - start;
  }

  std::string_view m_text;
  std::size_t m_start;  // where the tag's opener is
  std::size_t m_pos;
  Delimiters m_delimiters;
  std::size_t m_depth = 0;  // subexpressions open at m_pos
};

// `{{{{raw}}}} ... {{{{/raw}}}}` (or with `<<<<`, `>>>>`): the body as written.
std::optional<TemplateTag> read_raw_block(std::string_view text, std::size_t pos,
                                          Delimiters delimiters) {
  std::string opener = std::string(delimiters.opener) + std::string(delimiters.opener);
  std::string closer = std::string(delimiters.closer) + std::string(delimiters.closer);
  std::string open_tag = opener + "raw" + closer;
  std::string close_tag = opener + "/raw" + closer;
  if (text.substr(pos, open_tag.size()) != open_tag) return std::nullopt;
  std::size_t body = pos + open_tag.size();
  std::size_t found = text.find(close_tag, body);
  if (found == std::string_view::npos) return std::nullopt;
  TemplateTag tag;
  tag.kind = TemplateTag::Kind::raw;
  tag.name = std::string(text.substr(body, found - body));
  tag.end = found + close_tag.size();
  return tag;
}

std::optional<TemplateTag> read_tag_of(std::string_view text, std::size_t pos,
                                       Delimiters delimiters, bool blocks_allowed) {
  if (text.substr(pos, delimiters.opener.size()) != delimiters.opener) return std::nullopt;
  return TagReader(text, pos + delimiters.opener.size(), delimiters).read(blocks_allowed);
}

}  // namespace

bool is_plain_variable(const TemplateTag& tag) {
  const std::string& name = tag.expr.text;
  return tag.kind == TemplateTag::Kind::output && tag.expr.kind == TemplateExpr::Kind::path &&
         !tag.trim_before && !tag.trim_after && !name.empty() && is_name_start(name.front()) &&
         name != "this";
}

std::optional<TemplateTag> read_tag(std::string_view text, std::size_t pos, bool in_arithmetic) {
  std::optional<TemplateTag> tag;
  if (text[pos] == '{') {
    tag = read_raw_block(text, pos, k_brace);
    if (!tag) tag = read_tag_of(text, pos, k_triple, false);
    if (!tag) tag = read_tag_of(text, pos, k_brace, true);
  } else if (text[pos] == '<') {
    if (!in_arithmetic) tag = read_raw_block(text, pos, k_angle);
    if (!tag) tag = read_tag_of(text, pos, k_angle, true);
    if (tag && in_arithmetic && !is_plain_variable(*tag)) tag.reset();
  }
  if (tag) tag->source = text.substr(pos, tag->end - pos);
  return tag;
}

}  // namespace runner
