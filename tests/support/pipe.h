// A pipe for tests of what code writes to a descriptor that is not a
// terminal: the code writes to write_fd(), the test drains the read end.
#pragma once

#include <string>

namespace runner::testing {

// A pipe whose read end is drained without blocking.
class Pipe {
 public:
  Pipe();
  ~Pipe();
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  int write_fd() const { return m_write; }
  int read_fd() const { return m_read; }
  // Closes the write end (a reader then sees end of file).
  void close_write();
  // Everything readable right now.
  std::string drain();

 private:
  int m_read = -1;
  int m_write = -1;
};

}  // namespace runner::testing
