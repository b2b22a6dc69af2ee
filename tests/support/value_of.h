// The value of a Result that a test expects to succeed: when it failed, a
// failed expectation naming its message and a default value instead (or,
// for a type without one, such as a Journal, an exception that fails the
// test with the message).
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "runner/core/result.h"

namespace runner::testing {

template <typename T>
T value_of(Result<T> result) {
  if (!result) {
    std::string message = "unexpected failure: " + result.status().located_message();
    if constexpr (std::is_default_constructible_v<T>) {
      ADD_FAILURE() << message;
      return T{};
    } else {
      throw std::runtime_error(message);
    }
  }
  return std::move(*result);
}

}  // namespace runner::testing
