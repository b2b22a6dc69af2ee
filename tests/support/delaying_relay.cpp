#include "support/delaying_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace runner::testing {

namespace {

using Clock = std::chrono::steady_clock;

struct Chunk {
  Clock::time_point due;
  std::string bytes;
};

// One direction of a connection: what was read from `from`, waiting to be
// written to `to` when due.
struct Direction {
  int from = -1;
  int to = -1;
  std::deque<Chunk> waiting;
  bool read_ended = false;  // `from` said end of file (or failed)
  bool shut = false;        // `to` was told, once all had been written
};

struct Connection {
  Direction up;    // client to target
  Direction down;  // target to client
  bool over() const { return up.shut && down.shut; }
};

int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
  }
  if (fd >= 0) close(fd);
  return -1;
}

}  // namespace

DelayingRelay::DelayingRelay(int target_port, LinkFaults faults)
    : m_target_port(target_port), m_faults(faults) {
  m_listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (m_listener < 0 || bind(m_listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(m_listener, 64) != 0 ||
      getsockname(m_listener, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      pipe2(m_stop, O_CLOEXEC) != 0)
    throw std::runtime_error("the delaying relay cannot listen");
  m_port = ntohs(address.sin_port);
  m_thread = std::thread([this] { relay(); });
}

DelayingRelay::~DelayingRelay() {
  if (write(m_stop[1], "x", 1) != 1) std::terminate();
  m_thread.join();
  close(m_stop[0]);
  close(m_stop[1]);
  close(m_listener);
}

void DelayingRelay::relay() {
  std::vector<std::unique_ptr<Connection>> connections;
  auto read_side = [&](Direction& direction) {
    char buffer[16384];
    ssize_t n = read(direction.from, buffer, sizeof buffer);
    if (n <= 0) {
      direction.read_ended = true;
      return;
    }
    Clock::time_point due = Clock::now() + m_faults.delay;
    if (++m_chunks % m_faults.stall_every == 0) {
      due += m_faults.stall;
      ++m_stalls;
    }
    if (!direction.waiting.empty()) due = std::max(due, direction.waiting.back().due);
    direction.waiting.push_back({due, std::string(buffer, static_cast<std::size_t>(n))});
  };
  auto write_due = [](Direction& direction) {
    Clock::time_point now = Clock::now();
    while (!direction.waiting.empty() && direction.waiting.front().due <= now) {
      std::string& bytes = direction.waiting.front().bytes;
      ssize_t n = send(direction.to, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EAGAIN) return;
      if (n < 0) {
        direction.waiting.clear();
        direction.read_ended = true;
        break;
      }
      bytes.erase(0, static_cast<std::size_t>(n));
      if (!bytes.empty()) return;
      direction.waiting.pop_front();
    }
    if (direction.read_ended && direction.waiting.empty() && !direction.shut) {
      shutdown(direction.to, SHUT_WR);
      direction.shut = true;
    }
  };
  while (true) {
    std::vector<pollfd> fds{{m_stop[0], POLLIN, 0}, {m_listener, POLLIN, 0}};
    std::vector<Direction*> readers;
    Clock::time_point next_due = Clock::time_point::max();
    for (auto& connection : connections) {
      for (Direction* direction : {&connection->up, &connection->down}) {
        if (!direction->read_ended) {
          fds.push_back({direction->from, POLLIN, 0});
          readers.push_back(direction);
        }
        if (!direction->waiting.empty())
          next_due = std::min(next_due, direction->waiting.front().due);
      }
    }
    int timeout = -1;
    if (next_due != Clock::time_point::max())
      timeout = static_cast<int>(std::max<long>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(next_due - Clock::now())
                     .count() + 1));
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
    if (fds[0].revents) break;
    if (fds[1].revents & POLLIN) {
      int client = accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
      int target = client >= 0 ? connect_to(m_target_port) : -1;
      if (target < 0) {
        if (client >= 0) close(client);
      } else {
        int one = 1;
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto connection = std::make_unique<Connection>();
        connection->up.from = connection->down.to = client;
        connection->down.from = connection->up.to = target;
        connections.push_back(std::move(connection));
      }
    }
    for (std::size_t i = 0; i < readers.size(); ++i)
      if (fds[i + 2].revents) read_side(*readers[i]);
    for (auto& connection : connections) {
      write_due(connection->up);
      write_due(connection->down);
    }
    std::erase_if(connections, [](const std::unique_ptr<Connection>& connection) {
      if (!connection->over()) return false;
      close(connection->up.from);
      close(connection->down.from);
      return true;
    });
  }
  for (auto& connection : connections) {
    close(connection->up.from);
    close(connection->down.from);
  }
}

}  // namespace runner::testing
