// A value, or the Status that says why there is none: what a function that
// can fail in an expected way returns when it has something to give back.
// Marked [[nodiscard]], like Status.
#pragma once

#include <cassert>
#include <optional>
#include <utility>

#include "runner/core/status.h"

namespace runner {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : m_value(std::move(value)) {}
  // `error` must be a failure.
  Result(Status error) : m_error(std::move(error)) { assert(!m_error.ok()); }

  bool ok() const { return m_value.has_value(); }
  explicit operator bool() const { return ok(); }
  // Only when ok().
  T& operator*() { return *m_value; }
  const T& operator*() const { return *m_value; }
  T* operator->() { return &*m_value; }
  const T* operator->() const { return &*m_value; }
  // Why there is no value; ok() when there is one.
  const Status& status() const { return m_error; }

 private:
  std::optional<T> m_value;
  Status m_error;
};

}  // namespace runner
