// A TCP relay on 127.0.0.1 that makes a slow, lossy link in user space
// (the kernel here has no netem): every chunk read from one side reaches the
// other `delay` later, and one chunk in `stall_every` is held `stall`
// longer, as a retransmission after a lost packet holds what follows it.
// Order is kept in each direction. One thread relays every connection.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

namespace runner::testing {

struct LinkFaults {
  std::chrono::milliseconds delay{100};
  int stall_every = 100;
  std::chrono::milliseconds stall{300};
};

class DelayingRelay {
 public:
  // Relays connections to 127.0.0.1:`target_port`. Throws std::runtime_error
  // if it cannot listen.
  DelayingRelay(int target_port, LinkFaults faults);
  ~DelayingRelay();
  DelayingRelay(const DelayingRelay&) = delete;
  DelayingRelay& operator=(const DelayingRelay&) = delete;

  // Where to connect to reach the target through the link.
  int port() const { return m_port; }
  // Chunks relayed and chunks held the longer time, so far.
  long chunks() const { return m_chunks; }
  long stalls() const { return m_stalls; }

 private:
  void relay();

  int m_target_port;
  LinkFaults m_faults;
  int m_listener = -1;
  int m_port = 0;
  int m_stop[2] = {-1, -1};
  std::atomic<long> m_chunks{0};
  std::atomic<long> m_stalls{0};
  std::thread m_thread;
};

}  // namespace runner::testing
