// Ordered key/value parameters: a slot's host parameters or a job's
// parameters, in the order the user wrote the keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace runner {

using Param = std::pair<std::string, std::string>;
using Params = std::vector<Param>;

// The value of `key`, or nullopt.
std::optional<std::string> find_param(const Params& params, std::string_view key);

}  // namespace runner
