// The result of an operation that can fail in an expected way (a disk that
// is full, a file that cannot be opened): ok, or a message that names what
// failed and why. Every area may include it; it includes nothing of ours.
// Marked [[nodiscard]]: a failure that nobody reads is data lost.
#pragma once

#include <string>
#include <utility>

namespace runner {

// What kind of failure a Status is, where a caller decides by it: a host
// that refuses the key is not tried again, one that did not answer is.
enum class ErrorKind {
  failed,        // no kind that anyone decides by
  connect,       // a host could not be reached
  host_key,      // its host key is unknown, changed or revoked
  auth,          // it refused every key
  protocol,      // it answered, but not as it should
  timeout,       // it did not answer in time
  disconnected,  // the connection was lost
  undefined,     // a template uses a variable that nothing defines
  ended,         // the hosts' allocation is ending (Slurm): none of them runs anything again
};

class [[nodiscard]] Status {
 public:
  // Success.
  Status() = default;
  static Status ok_status() { return Status(); }
  // A failure; `message` says what failed and why ("cannot write the journal
  // q.runner/journal.jsonl: No space left on device"), naming the host and
  // the step where there is one, and the fix where there is one.
  static Status error(std::string message) { return Status(ErrorKind::failed, std::move(message)); }
  Status(ErrorKind kind, std::string message)
      : m_message(std::move(message)), m_kind(kind), m_failed(true) {}
  // A failure caused by what `file` says at `line` (0: the file as a whole),
  // for bad configuration that the user must find and fix: whoever reports
  // it names the place ("~/.ssh/config:12: Bad port '22x'").
  static Status at(std::string file, int line, std::string message) {
    return at(std::move(file), line, 0, std::move(message));
  }
  // The same with the column (1-based; 0: not known) where the cause starts.
  static Status at(std::string file, int line, int column, std::string message) {
    Status status = error(std::move(message));
    status.m_file = std::move(file);
    status.m_line = line;
    status.m_column = column;
    return status;
  }

  bool ok() const { return !m_failed; }
  explicit operator bool() const { return ok(); }
  // Empty for success.
  const std::string& message() const { return m_message; }
  ErrorKind kind() const { return m_kind; }
  // Where the cause is, for a Status made by at(): not part of message().
  // Empty and 0 when not known.
  const std::string& file() const { return m_file; }
  int line() const { return m_line; }
  int column() const { return m_column; }
  // The message after its place, as a user reads it: "queue.yaml:3:5: ...",
  // "hosts.yaml: ..." for a file as a whole, the message alone when no file
  // is known.
  std::string located_message() const {
    if (m_file.empty()) return m_message;
    std::string place = m_file;
    if (m_line > 0) place += ":" + std::to_string(m_line);
    if (m_line > 0 && m_column > 0) place += ":" + std::to_string(m_column);
    return place + ": " + m_message;
  }

  // Keeps the first failure of two.
  Status& update(const Status& other) {
    if (ok() && !other.ok()) *this = other;
    return *this;
  }

 private:
  std::string m_message;
  std::string m_file;
  int m_line = 0;
  int m_column = 0;
  ErrorKind m_kind = ErrorKind::failed;
  bool m_failed = false;
};

}  // namespace runner
