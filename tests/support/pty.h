// A pseudo-terminal for tests of what a user sees on a terminal: the code
// under test writes to the terminal side, the test reads what arrived from
// the controlling side.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace runner::testing {

// A pseudo-terminal pair in raw mode, so what is read is exactly what was written.
class Pty {
 public:
  // Opens the pair; with non-zero `columns` and `rows` the terminal has that size.
  explicit Pty(unsigned short columns = 0, unsigned short rows = 0);
  ~Pty();
  Pty(const Pty&) = delete;
  Pty& operator=(const Pty&) = delete;

  // False when no pseudo-terminal could be opened here.
  bool ok() const { return m_slave >= 0; }
  // The terminal side, for the code under test to write to.
  int terminal_fd() const { return m_slave; }
  // Reads until `bytes` bytes arrived or nothing more comes for two seconds.
  std::string read(std::size_t bytes);
  // Everything written so far: reads until nothing more comes for 100 ms.
  std::string read_all();

 private:
  std::string read_until(std::size_t bytes, std::chrono::milliseconds quiet);

  int m_master = -1;
  int m_slave = -1;
};

}  // namespace runner::testing
