// Private to cli: a failure that ends the command. What an area returns as
// a Status becomes the ConfigError that run_cli reports with its place
// ("queue.yaml:3:5: ...") and exit status 2; no area below throws it.
#pragma once

#include <utility>

#include "runner/config/config_error.h"
#include "runner/core/result.h"

namespace runner {

// Ends the command when `status` failed.
inline void fatal_unless(const Status& status) {
  if (!status) throw ConfigError(status);
}

// The value of `result`; ends the command when there is none.
template <typename T>
T value_or_fatal(Result<T> result) {
  fatal_unless(result.status());
  return std::move(*result);
}

}  // namespace runner
