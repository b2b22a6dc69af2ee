// The real binary on a pseudo-terminal of its own; see terminal_run.h.
#include "support/terminal_run.h"

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

namespace runner::testing {

TerminalRun::TerminalRun(const TempDir& dir, std::vector<std::string> args, Ci ci) {
  args.insert(args.begin(), RUNNER_BINARY);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  m_pid = forkpty(&m_terminal, nullptr, nullptr, nullptr);
  if (m_pid == 0) {
    if (chdir(dir.path().c_str()) != 0) _exit(126);
    setenv("NO_COLOR", "1", 1);
    unsetenv("SSH_AUTH_SOCK");
    if (ci == Ci::unset) unsetenv("CI");
    if (ci == Ci::set) setenv("CI", "true", 1);
    execv(RUNNER_BINARY, argv.data());
    _exit(127);
  }
}

TerminalRun::~TerminalRun() {
  if (m_pid > 0 && !m_exited) {
    kill(m_pid, SIGKILL);
    waitpid(m_pid, nullptr, 0);
  }
  if (m_terminal >= 0) close(m_terminal);
}

bool TerminalRun::read_until(const std::string& text, std::chrono::milliseconds limit) {
  auto give_up = std::chrono::steady_clock::now() + limit;
  while (m_seen.find(text) == std::string::npos && std::chrono::steady_clock::now() < give_up) {
    pollfd entry{m_terminal, POLLIN, 0};
    if (poll(&entry, 1, 100) <= 0) continue;
    char buffer[4096];
    ssize_t got = read(m_terminal, buffer, sizeof buffer);
    if (got <= 0) break;
    m_seen.append(buffer, static_cast<size_t>(got));
  }
  return m_seen.find(text) != std::string::npos;
}

void TerminalRun::read_to_end(std::chrono::milliseconds limit) {
  read_until("\x04never printed", limit);
}

ssize_t TerminalRun::type(const std::string& text) {
  return write(m_terminal, text.data(), text.size());
}

int TerminalRun::wait(std::chrono::milliseconds limit) {
  int status = -1;
  auto give_up = std::chrono::steady_clock::now() + limit;
  while (waitpid(m_pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= give_up) {
      kill(m_pid, SIGKILL);
      waitpid(m_pid, &status, 0);
      break;
    }
    usleep(50'000);
  }
  m_exited = true;
  return status;
}

}  // namespace runner::testing
