#include "runner/exec/event_loop.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace runner {

void EventLoop::add(Pollable* pollable) { m_pollables.push_back(pollable); }

void EventLoop::remove(Pollable* pollable) { std::erase(m_pollables, pollable); }

Status EventLoop::run_once(std::optional<Clock::duration> max_wait) {
  m_fds.clear();
  std::optional<Clock::time_point> wake;
  for (Pollable* p : m_pollables) {
    p->poll_fds(m_fds);
    if (auto d = p->deadline()) wake = wake ? std::min(*wake, *d) : *d;
  }
  Clock::time_point now = Clock::now();
  if (max_wait) wake = wake ? std::min(*wake, now + *max_wait) : now + *max_wait;

  int timeout_ms = -1;
  if (wake && *wake <= now) {
    timeout_ms = 0;
  } else if (wake) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*wake - now).count();
    timeout_ms = static_cast<int>(std::min<long long>(left, 60'000));
  }
  if (poll(m_fds.data(), m_fds.size(), timeout_ms) < 0 && errno != EINTR)
    return Status::error(std::string("poll: ") + std::strerror(errno));

  now = Clock::now();
  // A pollable may remove itself or others while stepping: iterate a copy.
  std::vector<Pollable*> pollables = m_pollables;
  for (Pollable* p : pollables)
    if (std::find(m_pollables.begin(), m_pollables.end(), p) != m_pollables.end()) p->step(now);
  return Status::ok_status();
}

}  // namespace runner
