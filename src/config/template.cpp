// Renders a parsed template (template_parser.cpp) with a job's variables,
// and lists the variables a template must have. Variables are text; `#each`
// walks the comma-separated items of a value. Pure and stateless.
#include "runner/config/template.h"

#include <algorithm>

#include "template_helpers.h"
#include "template_syntax.h"

namespace runner {

namespace {

constexpr std::string_view k_parent = "../";

bool is_context_path(std::string_view path) {
  return path == "this" || path == "." || path.starts_with('@');
}

// The variable a path names: `../gpu` is `gpu`; `this` and `@index` name none.
std::optional<std::string_view> variable_of(std::string_view path) {
  while (path.starts_with(k_parent)) path.remove_prefix(k_parent.size());
  if (is_context_path(path)) return std::nullopt;
  return path;
}

std::vector<std::string> split_items(const std::string& text) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

// What `this` and the `@` variables are inside a block.
struct Scope {
  TemplateValue value;
  std::size_t index = 0;
  std::size_t count = 0;
  bool in_each = false;
};

class Renderer {
 public:
  explicit Renderer(const VariableLookup& lookup) : m_lookup(lookup) {}

  // The text, or a Status of kind `undefined` naming the first variable
  // that the lookup did not know.
  Result<std::string> render(const std::vector<TemplateNode>& nodes) {
    render_all(nodes);
    if (m_undefined) return Status(ErrorKind::undefined, "<<" + *m_undefined + ">> is not defined");
    return std::move(m_out);
  }

 private:
  void render(const TemplateNode& node) {
    switch (node.kind) {
      case TemplateNode::Kind::text:
        m_out += node.text;
        return;
      case TemplateNode::Kind::output:
        if (node.shell_unless_defined) {
          m_out += m_lookup(node.expr.text).value_or(node.text);
          return;
        }
        m_out += evaluate(node.expr).to_string();
        return;
      case TemplateNode::Kind::block:
        render_block(node);
        return;
    }
  }

  void render_all(const std::vector<TemplateNode>& nodes) {
    for (const TemplateNode& node : nodes) {
      if (m_undefined) return;
      render(node);
    }
  }

  void render_in(const std::vector<TemplateNode>& nodes, Scope scope) {
    m_scopes.push_back(std::move(scope));
    render_all(nodes);
    m_scopes.pop_back();
  }

  void render_block(const TemplateNode& block) {
    const std::string& helper = block.expr.text;
    TemplateValue value = evaluate(block.expr.args.front());
    if (helper == "if" || helper == "unless") {
      render_all(value.truthy() == (helper == "if") ? block.body : block.inverse);
    } else if (helper == "with") {
      if (value.truthy())
        render_in(block.body, Scope{value, 0, 0, false});
      else
        render_all(block.inverse);
    } else {
      std::vector<std::string> items = split_items(value.to_string());
      if (items.empty()) render_all(block.inverse);
      for (std::size_t i = 0; i < items.size(); ++i)
        render_in(block.body, Scope{TemplateValue::of_string(items[i]), i, items.size(), true});
    }
  }

  TemplateValue evaluate(const TemplateExpr& expr) {
    switch (expr.kind) {
      case TemplateExpr::Kind::string:
        return TemplateValue::of_string(expr.text);
      case TemplateExpr::Kind::number:
        return TemplateValue::of_number(expr.text);
      case TemplateExpr::Kind::literal:
        return expr.text == "null" ? TemplateValue{} : TemplateValue::of_bool(expr.text == "true");
      case TemplateExpr::Kind::path:
        return resolve(expr.text);
      case TemplateExpr::Kind::call:
        break;
    }
    const TemplateHelper* helper = find_helper(expr.text);
    std::vector<TemplateValue> args;
    args.reserve(expr.args.size());
    for (const TemplateExpr& arg : expr.args) args.push_back(evaluate(arg));
    return helper->call(args);
  }

  TemplateValue resolve(std::string_view path) {
    if (auto variable = variable_of(path)) {
      std::optional<std::string> value = m_lookup(*variable);
      if (!value) {
        if (!m_undefined) m_undefined = std::string(*variable);
        return {};
      }
      return TemplateValue::of_string(std::move(*value));
    }
    while (path.starts_with(k_parent)) path.remove_prefix(k_parent.size());
    const Scope* each = nullptr;
    for (auto it = m_scopes.rbegin(); it != m_scopes.rend() && !each; ++it)
      if (it->in_each) each = &*it;
    if (path == "this" || path == ".")
      return m_scopes.empty() ? TemplateValue{} : m_scopes.back().value;
    if (!each) return {};
    if (path == "@index") return TemplateValue::of_number(std::to_string(each->index));
    if (path == "@first") return TemplateValue::of_bool(each->index == 0);
    if (path == "@last") return TemplateValue::of_bool(each->index + 1 == each->count);
    return {};
  }

  const VariableLookup& m_lookup;
  std::vector<Scope> m_scopes;
  std::string m_out;
  std::optional<std::string> m_undefined;  // the first variable the lookup did not know
};

void collect(const TemplateExpr& expr, std::vector<std::string>& names) {
  if (expr.kind == TemplateExpr::Kind::path) {
    auto variable = variable_of(expr.text);
    if (variable && std::find(names.begin(), names.end(), *variable) == names.end())
      names.emplace_back(*variable);
  }
  for (const TemplateExpr& arg : expr.args) collect(arg, names);
}

void collect(const std::vector<TemplateNode>& nodes, std::vector<std::string>& names) {
  for (const TemplateNode& node : nodes) {
    if (node.kind == TemplateNode::Kind::text || node.shell_unless_defined) continue;
    collect(node.expr, names);
    collect(node.body, names);
    collect(node.inverse, names);
  }
}

}  // namespace

Result<std::vector<std::string>> template_variables(std::string_view text) {
  Result<std::vector<TemplateNode>> nodes = parse_template(text);
  if (!nodes) return nodes.status();
  std::vector<std::string> names;
  collect(*nodes, names);
  return names;
}

Result<std::string> render_template(std::string_view text, const VariableLookup& lookup) {
  Result<std::vector<TemplateNode>> nodes = parse_template(text);
  if (!nodes) return nodes.status();
  return Renderer(lookup).render(*nodes);
}

}  // namespace runner
