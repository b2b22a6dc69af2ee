// The receive hook that watches what a server sends: the first bytes (a
// banner, or why sshd dropped the handshake), a peer's close, a socket
// error, the time of the last bytes (for keepalives), and quick ACKs on TCP.
// Threading: none.
#include "ssh_inbound.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace runner::ssh {

namespace {

constexpr size_t k_first_bytes_kept = 512;

}  // namespace

void InboundTrace::reset() {
  first_bytes.clear();
  peer_closed = false;
  socket_errno = 0;
}

ssize_t InboundTrace::receive_hook(int fd, void* buffer, size_t length, int flags,
                                   void** abstract) {
  auto* self = static_cast<InboundTrace*>(*abstract);
  ssize_t received = ::recv(fd, buffer, length, flags);
  if (received > 0) {
    // A short read is a reply, not a stream: acknowledge what comes next at
    // once. Otherwise a peer that sends two small packets in a row without
    // TCP_NODELAY (sshd does, outside terminal sessions; a jump host's sshd
    // relays every packet from the host behind it so) holds the second until
    // our delayed ACK, 40 ms later. Linux leaves quick-ACK mode by itself,
    // so it is asked again after each read.
    if (self->over_tcp && static_cast<size_t>(received) < length) {
      int on = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
    }
    if (self->first_bytes.size() < k_first_bytes_kept) {
      size_t keep =
          std::min(static_cast<size_t>(received), k_first_bytes_kept - self->first_bytes.size());
      self->first_bytes.append(static_cast<const char*>(buffer), keep);
    }
    self->last_inbound = self->now;
    return received;
  }
  if (received == 0) {
    self->peer_closed = true;
    return 0;
  }
  int error_number = errno;
  if (error_number == EAGAIN || error_number == EWOULDBLOCK || error_number == EINTR) {
    return -EAGAIN;
  }
  self->socket_errno = error_number;
  return -error_number;
}

}  // namespace runner::ssh
