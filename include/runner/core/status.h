// The result of an operation that can fail in an expected way (a disk that
// is full, a file that cannot be opened): ok, or a message that names what
// failed and why. Every area may include it; it includes nothing of ours.
// Marked [[nodiscard]]: a failure that nobody reads is data lost.
#pragma once

#include <string>
#include <utility>

namespace runner {

class [[nodiscard]] Status {
 public:
  // Success.
  Status() = default;
  static Status ok_status() { return Status(); }
  // A failure; `message` says what failed and why ("cannot write the journal
  // q.runner/journal.jsonl: No space left on device").
  static Status error(std::string message) { return Status(std::move(message)); }

  bool ok() const { return !m_failed; }
  explicit operator bool() const { return ok(); }
  // Empty for success.
  const std::string& message() const { return m_message; }

  // Keeps the first failure of two.
  Status& update(const Status& other) {
    if (ok() && !other.ok()) *this = other;
    return *this;
  }

 private:
  explicit Status(std::string message) : m_message(std::move(message)), m_failed(true) {}

  std::string m_message;
  bool m_failed = false;
};

}  // namespace runner
