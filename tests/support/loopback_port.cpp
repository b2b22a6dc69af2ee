// Ports on 127.0.0.1 for tests (see loopback_port.h).
#include "support/loopback_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace runner::testing {

namespace {

sockaddr_in loopback_address(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  return addr;
}

// A socket bound to a port the kernel picks on 127.0.0.1, and that port.
int bind_any_port(int& port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr = loopback_address(0);
  socklen_t length = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    close(fd);
    throw std::runtime_error("cannot bind a port on 127.0.0.1");
  }
  port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

int unused_port() {
  int port = 0;
  close(bind_any_port(port));
  return port;
}

int silent_listener(int& port) {
  int fd = bind_any_port(port);
  if (listen(fd, 4) != 0) {
    close(fd);
    throw std::runtime_error("cannot listen on 127.0.0.1");
  }
  return fd;
}

int port_in_time_wait() {
  int port = 0;
  int listener = silent_listener(port);
  // As servers do, so that the next one may listen while the TIME_WAIT lasts.
  int on = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = loopback_address(port);
  int server = -1;
  if (client >= 0 && connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
    server = accept(listener, nullptr, nullptr);
  close(listener);
  if (server < 0) {
    if (client >= 0) close(client);
    throw std::runtime_error("cannot connect to a listener on 127.0.0.1");
  }
  // The server's side closes first; once the client has read the end and
  // closed too, the server's socket waits in TIME_WAIT.
  close(server);
  char byte;
  while (read(client, &byte, 1) > 0) {
  }
  close(client);
  return port;
}

bool accepts_connections(int port, const std::string& address) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr = loopback_address(port);
  if (inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    close(fd);
    return false;
  }
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

}  // namespace runner::testing
