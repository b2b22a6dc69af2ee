// The value of a Result that a test expects to succeed: when it failed, a
// failed expectation naming its message and a default value instead.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "runner/core/result.h"

namespace runner::testing {

template <typename T>
T value_of(Result<T> result) {
  if (!result) {
    ADD_FAILURE() << "unexpected failure: " << result.status().located_message();
    return T{};
  }
  return std::move(*result);
}

}  // namespace runner::testing
