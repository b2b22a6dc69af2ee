// Command templates: template_variables and render_template on any text,
// every variable defined as its own name. TemplateError and
// UndefinedVariable are the answers to a bad template.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runner/config/template.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    runner::template_variables(text);
    runner::render_template(text, [](std::string_view name) -> std::optional<std::string> {
      if (name == "undefined") return std::nullopt;
      return std::string(name);
    });
  } catch (const runner::TemplateError&) {
  } catch (const runner::UndefinedVariable&) {
  }
  return 0;
}
