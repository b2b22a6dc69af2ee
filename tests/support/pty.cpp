// A pseudo-terminal pair for tests; see pty.h.
#include "support/pty.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <limits>

namespace runner::testing {

Pty::Pty(unsigned short columns, unsigned short rows) {
  m_master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (m_master < 0 || ::grantpt(m_master) != 0 || ::unlockpt(m_master) != 0) return;
  m_slave = ::open(::ptsname(m_master), O_RDWR | O_NOCTTY);
  if (m_slave < 0) return;
  termios mode{};
  ::tcgetattr(m_slave, &mode);
  ::cfmakeraw(&mode);
  ::tcsetattr(m_slave, TCSANOW, &mode);
  if (columns > 0 && rows > 0) {
    winsize size{};
    size.ws_col = columns;
    size.ws_row = rows;
    ::ioctl(m_slave, TIOCSWINSZ, &size);
  }
}

Pty::~Pty() {
  if (m_slave >= 0) ::close(m_slave);
  if (m_master >= 0) ::close(m_master);
}

std::string Pty::read(std::size_t bytes) { return read_until(bytes, std::chrono::seconds(2)); }

std::string Pty::read_all() {
  return read_until(std::numeric_limits<std::size_t>::max(), std::chrono::milliseconds(100));
}

std::string Pty::read_until(std::size_t bytes, std::chrono::milliseconds quiet) {
  std::string text;
  char buffer[4096];
  while (text.size() < bytes) {
    pollfd pfd{m_master, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(quiet.count())) <= 0) break;
    ssize_t n = ::read(m_master, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace runner::testing
