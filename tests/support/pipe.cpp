// Pipe: a non-blocking pipe for tests (see pipe.h).
#include "support/pipe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

namespace runner::testing {

Pipe::Pipe() {
  int fds[2];
  if (::pipe(fds) != 0) std::abort();
  m_read = fds[0];
  m_write = fds[1];
  ::fcntl(m_read, F_SETFL, O_NONBLOCK);
}

Pipe::~Pipe() {
  ::close(m_read);
  if (m_write >= 0) ::close(m_write);
}

void Pipe::close_write() {
  ::close(m_write);
  m_write = -1;
}

std::string Pipe::drain() {
  std::string text;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(m_read, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace runner::testing
