// The failure of a configuration read that a test expects to fail, as the
// command line reports it (a ConfigError names the file, line and column);
// a failed expectation when it succeeded.
#pragma once

#include <gtest/gtest.h>

#include "runner/config/config_error.h"
#include "runner/core/result.h"

namespace runner::testing {

inline ConfigError failure_of(const Status& status) {
  if (status) {
    ADD_FAILURE() << "expected a failure";
    return ConfigError("none");
  }
  return ConfigError(status);
}

template <typename T>
ConfigError failure_of(const Result<T>& result) {
  return failure_of(result ? Status() : result.status());
}

}  // namespace runner::testing
