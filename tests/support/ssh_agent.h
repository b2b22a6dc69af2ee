// A throwaway ssh-agent on a socket of the test's own, for tests of
// authentication through an agent. Stopped when destroyed.
#pragma once

#include <sys/types.h>

#include <string>

namespace runner::testing {

// An `ssh-agent -D` listening on `socket`, holding the keys added to it.
class SshAgent {
 public:
  // Starts the agent and waits (up to 5 s) for its socket.
  explicit SshAgent(std::string socket);
  ~SshAgent();
  SshAgent(const SshAgent&) = delete;
  SshAgent& operator=(const SshAgent&) = delete;

  // Adds a private key file (ssh-add); true on success.
  bool add(const std::string& key) const;
  const std::string& socket() const { return m_socket; }

 private:
  std::string m_socket;
  pid_t m_pid = -1;
};

}  // namespace runner::testing
