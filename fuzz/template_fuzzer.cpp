// Command templates: template_variables and render_template on any text,
// every variable defined as its own name. A failure is the answer to a bad
// template.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runner/config/template.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static_cast<void>(runner::template_variables(text));
  static_cast<void>(
      runner::render_template(text, [](std::string_view name) -> std::optional<std::string> {
        if (name == "undefined") return std::nullopt;
        return std::string(name);
      }));
  return 0;
}
