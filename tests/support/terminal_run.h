// The real `runner` binary on a pseudo-terminal of its own, as a user runs
// it: it is the terminal's foreground process group, so typing Ctrl-C
// there sends SIGINT as a terminal does; what it prints is gathered.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace runner::testing {

// Whether the runner on a terminal keeps the test's CI variable, runs
// without it as on a user's terminal (where the status line is on), or runs
// with CI=true (no status line) whatever the test's is.
enum class Ci { kept, unset, set };

// `runner ARGS` in a test directory on a pseudo-terminal of its own, with
// NO_COLOR set and no ssh-agent; what it prints is gathered in seen().
class TerminalRun {
 public:
  TerminalRun(const TempDir& dir, std::vector<std::string> args, Ci ci);
  ~TerminalRun();
  TerminalRun(const TerminalRun&) = delete;
  TerminalRun& operator=(const TerminalRun&) = delete;

  bool started() const { return m_pid > 0; }
  pid_t pid() const { return m_pid; }
  const std::string& seen() const { return m_seen; }

  // Reads until the output shows `text`, the runner closes the terminal, or
  // `limit` passes; whether `text` was seen.
  bool read_until(const std::string& text, std::chrono::milliseconds limit);
  // Everything, until the runner closes the terminal or `limit` passes.
  void read_to_end(std::chrono::milliseconds limit);

  // Types `text`; how many bytes were written.
  ssize_t type(const std::string& text);

  // The runner's wait status once it exits, killed if it has not within `limit`.
  int wait(std::chrono::milliseconds limit);

 private:
  pid_t m_pid = -1;
  int m_terminal = -1;
  bool m_exited = false;
  std::string m_seen;
};

}  // namespace runner::testing
