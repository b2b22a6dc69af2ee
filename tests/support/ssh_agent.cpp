// SshAgent: a throwaway ssh-agent (see ssh_agent.h).
#include "support/ssh_agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include "support/process.h"

namespace runner::testing {

SshAgent::SshAgent(std::string socket) : m_socket(std::move(socket)) {
  m_pid = fork();
  if (m_pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    execlp("ssh-agent", "ssh-agent", "-D", "-a", m_socket.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 500 && access(m_socket.c_str(), F_OK) != 0; ++i) usleep(10'000);
}

SshAgent::~SshAgent() {
  if (m_pid <= 0) return;
  kill(m_pid, SIGTERM);
  waitpid(m_pid, nullptr, 0);
}

bool SshAgent::add(const std::string& key) const {
  return run_process({{"ssh-add", key}, "", {{"SSH_AUTH_SOCK", m_socket}}}).status == 0;
}

}  // namespace runner::testing
