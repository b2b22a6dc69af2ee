#include "runner/config/params.h"

namespace runner {

std::optional<std::string> find_param(const Params& params, std::string_view key) {
  for (const auto& [k, v] : params)
    if (k == key) return v;
  return std::nullopt;
}

}  // namespace runner
