// Builds the tree of a template: finds tags in the text (leaving shell text,
// shell arithmetic and escaped tags as they are), nests blocks, and checks
// every helper and its arguments before anything renders. Pure.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "runner/config/template.h"
#include "template_helpers.h"
#include "template_syntax.h"

namespace runner {

namespace {

// The offset just past the `))` that closes the shell arithmetic `$((` at
// `pos`, or the end of the text if it is not closed.
std::size_t arithmetic_end(std::string_view text, std::size_t pos) {
  int depth = 0;
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i + 1;
  }
  return text.size();
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool is_whitespace(char c) { return is_blank(c) || c == '\n' || c == '\r'; }

// Tags that leave no line behind when they are alone on theirs.
bool may_stand_alone(TemplateTag::Kind kind) {
  return kind == TemplateTag::Kind::open_block || kind == TemplateTag::Kind::close_block ||
         kind == TemplateTag::Kind::else_block || kind == TemplateTag::Kind::comment;
}

// The escaped form of a tag, to offer as a fix.
std::string escaped(std::string_view source) { return "\\" + std::string(source); }

// A block being read: its opening tag and the nodes so far.
struct OpenBlock {
  TemplateNode node;
  std::string_view source;
  bool in_inverse = false;
  bool chained = false;  // opened by `{{else if x}}`, closed with the block before
};

class Parser {
 public:
  explicit Parser(std::string_view text) : m_text(text) {}

  std::vector<TemplateNode> parse() {
    std::size_t arithmetic_until = 0;
    std::size_t pos = 0;
    while (pos < m_text.size()) {
      char c = m_text[pos];
      if (pos >= arithmetic_until && m_text.substr(pos, 3) == "$((")
        arithmetic_until = arithmetic_end(m_text, pos);
      bool in_arithmetic = pos < arithmetic_until;
      if (c == '\\') {
        pos = m_text_from = escape_end(pos, in_arithmetic);
        continue;
      }
      std::optional<TemplateTag> tag;
      if (c == '{' || c == '<') tag = read_tag(m_text, pos, in_arithmetic);
      if (!tag) {
        add_text(m_text.substr(pos, 1));
        ++pos;
        continue;
      }
      std::size_t start = pos;
      pos = tag->end;
      if (may_stand_alone(tag->kind)) pos = standalone_end(start, pos);
      if (tag->trim_before) trim_text_end();
      if (tag->trim_after) pos = skip_whitespace(pos);
      m_text_from = pos;
      bool shell_unless_defined =
          m_text[start] == '<' && is_plain_variable(*tag) &&
          (in_arithmetic ? follows_operand(start) : heredoc_ends_after(tag->expr.text, start));
      add_tag(std::move(*tag), shell_unless_defined);
    }
    if (!m_open.empty()) {
      const OpenBlock& block = m_open[chain_start()];
      bool angle = block.source.front() == '<';
      fail(fmt::format("`{}` is never closed; add `{}/{}{}` where its block ends", block.source,
                       angle ? "<<" : "{{", block.node.expr.text, angle ? ">>" : "}}"));
    }
    return std::move(m_root);
  }

 private:
  [[noreturn]] static void fail(std::string message) { throw TemplateError{std::move(message)}; }

  // For a tag from `start` to `end` alone on its line, as Handlebars does:
  // drops the blanks before it and returns the offset past its line's end.
  // Otherwise returns `end`.
  std::size_t standalone_end(std::size_t start, std::size_t end) {
    std::size_t line_start = start;
    while (line_start > 0 && is_blank(m_text[line_start - 1])) --line_start;
    if (line_start > 0 && m_text[line_start - 1] != '\n') return end;
    if (line_start < m_text_from) return end;  // a `~}}` took the line's start
    std::size_t after = end;
    while (after < m_text.size() && is_blank(m_text[after])) ++after;
    if (m_text.substr(after, 2) == "\r\n")
      after += 2;
    else if (after < m_text.size() && m_text[after] == '\n')
      ++after;
    else if (after != m_text.size())
      return end;
    if (start > line_start) {
      std::string& indent = current().back().text;
      indent.resize(indent.size() - (start - line_start));
    }
    return after;
  }

  // Adds the backslashes that start at `pos`, and what they escape, and
  // returns the offset past them. As in Handlebars, backslashes before `{{`
  // lose one: `\{{` (and `\{{{{`) is text, whatever follows; `\\{{x}}` is a
  // backslash and the value. In runner's syntax only a tag is escaped:
  // `\<<x>>` is `<<x>>` as written, `\\<<x>>` a backslash and the value.
  std::size_t escape_end(std::size_t pos, bool in_arithmetic) {
    std::size_t run = std::min(m_text.find_first_not_of('\\', pos), m_text.size());
    std::size_t count = run - pos;
    bool braces = m_text.substr(run, 2) == "{{";
    std::optional<TemplateTag> tag;
    if (!braces && run < m_text.size() && m_text[run] == '<')
      tag = read_tag(m_text, run, in_arithmetic);
    if (!braces && !tag) {
      add_text(m_text.substr(pos, count));
      return run;
    }
    add_text(m_text.substr(pos, count - 1));
    if (count > 1) return run;  // what follows is read as any text
    if (tag) {
      add_text(tag->source);
      return tag->end;
    }
    std::size_t opener = m_text.substr(run, 4) == "{{{{" ? 4 : 2;
    add_text(m_text.substr(run, opener));
    return run + opener;
  }

  // Whether the text before `pos` ends with an operand of shell arithmetic
  // (`1`, `x`, `a[1]`, `(...)`), so that a `<<` at `pos` may be a shift.
  bool follows_operand(std::size_t pos) const {
    while (pos > 0 && is_whitespace(m_text[pos - 1])) --pos;
    if (pos == 0) return false;
    char c = m_text[pos - 1];
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == ')' || c == ']' || c == '}';
  }

  // Whether a line after the tag at `pos` is `name` alone: the end of a
  // heredoc that `<<name>>` opens (`cat <<EOF>>log`).
  bool heredoc_ends_after(std::string_view name, std::size_t pos) {
    if (!m_last_line_start) {
      m_last_line_start.emplace();
      for (std::size_t at = m_text.find('\n'); at != std::string_view::npos;) {
        std::size_t start = at + 1;
        at = m_text.find('\n', start);
        (*m_last_line_start)[m_text.substr(start, at - start)] = start;
      }
    }
    auto found = m_last_line_start->find(name);
    return found != m_last_line_start->end() && found->second > pos;
  }

  // `{{~`: drops the whitespace the text so far ends with.
  void trim_text_end() {
    std::vector<TemplateNode>& nodes = current();
    if (nodes.empty() || nodes.back().kind != TemplateNode::Kind::text) return;
    std::string& text = nodes.back().text;
    while (!text.empty() && is_whitespace(text.back())) text.pop_back();
  }

  // `~}}`: the offset past the whitespace from `pos` on.
  std::size_t skip_whitespace(std::size_t pos) const {
    while (pos < m_text.size() && is_whitespace(m_text[pos])) ++pos;
    return pos;
  }

  // The block a chain of `{{else if}}` blocks on top of the stack began with.
  std::size_t chain_start() const {
    std::size_t first = m_open.size() - 1;
    while (m_open[first].chained) --first;
    return first;
  }

  std::vector<TemplateNode>& current() {
    if (m_open.empty()) return m_root;
    OpenBlock& block = m_open.back();
    return block.in_inverse ? block.node.inverse : block.node.body;
  }

  void add_text(std::string_view text) {
    std::vector<TemplateNode>& nodes = current();
    if (nodes.empty() || nodes.back().kind != TemplateNode::Kind::text) {
      nodes.emplace_back();
      nodes.back().kind = TemplateNode::Kind::text;
    }
    nodes.back().text += text;
  }

  void add_tag(TemplateTag tag, bool shell_unless_defined) {
    switch (tag.kind) {
      case TemplateTag::Kind::comment:
        return;
      case TemplateTag::Kind::raw:
        add_text(tag.name);
        return;
      case TemplateTag::Kind::output: {
        check(tag.expr, tag.source);
        TemplateNode node;
        node.kind = TemplateNode::Kind::output;
        node.expr = std::move(tag.expr);
        node.shell_unless_defined = shell_unless_defined;
        if (shell_unless_defined) node.text = std::string(tag.source);
        current().push_back(std::move(node));
        return;
      }
      case TemplateTag::Kind::open_block:
        open_block(std::move(tag));
        return;
      case TemplateTag::Kind::else_block:
        if (m_open.empty() || m_open.back().in_inverse)
          fail(
              fmt::format("`{}` is outside any `#if`, `#unless`, `#each` or `#with` block, or "
                          "its second; write `{}` to pass it to the shell as written",
                          tag.source, escaped(tag.source)));
        m_open.back().in_inverse = true;
        if (!tag.expr.args.empty()) open_chained_block(std::move(tag));
        return;
      case TemplateTag::Kind::close_block:
        close_block(tag);
        return;
    }
  }

  void open_block(TemplateTag tag) {
    if (m_open.size() >= k_max_template_depth)
      fail(fmt::format(
          "`{}`: blocks are nested too deeply here (more than {} levels, an `else if` counting "
          "as one); a command needs a few: remove the extra nesting",
          tag.source, k_max_template_depth));
    const std::string& name = tag.expr.text;
    if (!is_block_helper(name))
      fail(
          fmt::format("`{}` opens a block of `{}`, which is not a block helper; the block "
                      "helpers are if, unless, each and with",
                      tag.source, name));
    if (tag.expr.args.size() != 1)
      fail(fmt::format("`{}`: `#{}` takes 1 argument, got {}", tag.source, name,
                       tag.expr.args.size()));
    for (const TemplateExpr& arg : tag.expr.args) check(arg, tag.source);
    OpenBlock block;
    block.node.kind = TemplateNode::Kind::block;
    block.node.expr = std::move(tag.expr);
    block.source = tag.source;
    m_open.push_back(std::move(block));
  }

  // `{{else if x}}`: an `{{#if x}}` block in the inverse of the open one.
  void open_chained_block(TemplateTag tag) {
    std::vector<TemplateExpr> args = std::move(tag.expr.args);
    if (args.front().kind != TemplateExpr::Kind::path)
      fail(fmt::format("`{}`: `else` takes a block helper, e.g. `else if x`", tag.source));
    tag.expr.text = args.front().text;
    tag.expr.args.assign(std::make_move_iterator(args.begin() + 1),
                         std::make_move_iterator(args.end()));
    tag.expr.kind = TemplateExpr::Kind::call;
    open_block(std::move(tag));
    m_open.back().chained = true;
  }

  void close_block(const TemplateTag& tag) {
    if (m_open.empty())
      fail(fmt::format("`{}` closes no block; write `{}` to pass it to the shell as written",
                       tag.source, escaped(tag.source)));
    std::size_t first = chain_start();
    if (m_open[first].node.expr.text != tag.name)
      fail(fmt::format("`{}` closes `{}`", tag.source, m_open[first].source));
    while (m_open.size() > first) {
      TemplateNode node = std::move(m_open.back().node);
      m_open.pop_back();
      current().push_back(std::move(node));
    }
  }

  // Checks that every helper `expr` calls exists and gets its arguments.
  void check(const TemplateExpr& expr, std::string_view source) const {
    if (expr.kind != TemplateExpr::Kind::call) return;
    const TemplateHelper* helper = find_helper(expr.text);
    if (!helper) {
      std::string_view like = helper_like(expr.text);
      fail(fmt::format(
          "`{}` calls the helper `{}`, which does not exist; {}the helpers are {} "
          "(to pass the text to the shell as written, write `{}`)",
          source, expr.text, like.empty() ? "" : fmt::format("did you mean `{}`? ", like),
          helper_names(), escaped(source)));
    }
    std::size_t count = expr.args.size();
    if (count < helper->min_args || count > helper->max_args) {
      std::string wanted = helper->min_args == helper->max_args
                               ? std::to_string(helper->min_args)
                               : fmt::format("at least {}", helper->min_args);
      fail(fmt::format("`{}`: `{}` takes {} argument{}, got {}", source, expr.text, wanted,
                       helper->max_args == 1 ? "" : "s", count));
    }
    for (const TemplateExpr& arg : expr.args) check(arg, source);
  }

  std::string_view m_text;
  std::size_t m_text_from = 0;  // where the text since the last tag begins
  std::vector<TemplateNode> m_root;
  std::vector<OpenBlock> m_open;
  // Where the last line holding each text starts; read when first needed.
  std::optional<std::unordered_map<std::string_view, std::size_t>> m_last_line_start;
};

}  // namespace

Result<std::vector<TemplateNode>> parse_template(std::string_view text) {
  try {
    return Parser(text).parse();
  } catch (const TemplateError& error) {
    return Status::error(error.what());
  }
}

}  // namespace runner
