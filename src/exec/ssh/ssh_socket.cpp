// Name resolution and non-blocking TCP connects for the SSH executor.
#include "ssh_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace runner::ssh {

namespace {

std::string address_text(const sockaddr* address) {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (address->sa_family == AF_INET) {
    auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    inet_ntop(AF_INET, &v4->sin_addr, buffer, sizeof buffer);
    return std::string(buffer) + ":" + std::to_string(ntohs(v4->sin_port));
  }
  if (address->sa_family == AF_INET6) {
    auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    inet_ntop(AF_INET6, &v6->sin6_addr, buffer, sizeof buffer);
    return "[" + std::string(buffer) + "]:" + std::to_string(ntohs(v6->sin6_port));
  }
  return "?";
}

}  // namespace

Result<std::vector<SocketAddress>> resolve_host(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (rc == EAI_ADDRFAMILY || rc == EAI_NONAME) {
    // AI_ADDRCONFIG hides loopback-only families on machines without other
    // interfaces; ask again without it.
    hints.ai_flags = 0;
    rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  }
  if (rc != 0) return Status::error(rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc));
  std::vector<SocketAddress> addresses;
  for (addrinfo* entry = found; entry; entry = entry->ai_next) {
    if (entry->ai_addrlen > sizeof(sockaddr_storage)) continue;
    SocketAddress address;
    std::memcpy(&address.storage, entry->ai_addr, entry->ai_addrlen);
    address.length = entry->ai_addrlen;
    address.text = address_text(entry->ai_addr);
    addresses.push_back(address);
  }
  freeaddrinfo(found);
  if (addresses.empty()) return Status::error("no usable address");
  return addresses;
}

int start_tcp_connect(const SocketAddress& address, bool& in_progress, int& error_number) {
  in_progress = false;
  int fd = socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error_number = errno;
    return -1;
  }
  int on = 1;
  // Without TCP_NODELAY every small SSH request waits for the peer's
  // delayed ACK (~40 ms per round trip).
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length) == 0) {
    return fd;
  }
  if (errno == EINPROGRESS || errno == EINTR) {
    in_progress = true;
    return fd;
  }
  error_number = errno;
  close(fd);
  return -1;
}

int tcp_connect_result(int fd) {
  pollfd entry{fd, POLLOUT, 0};
  int ready = poll(&entry, 1, 0);
  if (ready == 0) return -1;
  if (ready < 0) return errno == EINTR ? -1 : errno;
  int error_number = 0;
  socklen_t length = sizeof error_number;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error_number, &length) != 0) return errno;
  return error_number;
}

}  // namespace runner::ssh
