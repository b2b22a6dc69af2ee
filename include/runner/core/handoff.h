// Items handed from one thread to another in the order given, at most
// `capacity` of them waiting: the giver waits while that many wait, the
// taker while none does. The giver closes it when done; a taker that stops
// early stops it, and what is given from then on is dropped, so the giver
// never waits for a taker that is gone.
// Threading: one giver and one taker, each on a thread of its own.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace runner {

template <typename T>
class Handoff {
 public:
  explicit Handoff(std::size_t capacity) : m_capacity(capacity) {}

  void give(T item) {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_stopped || m_items.size() < m_capacity; });
    if (m_stopped) return;
    m_items.push_back(std::move(item));
    m_changed.notify_all();
  }

  // The giver is done.
  void close() {
    std::lock_guard lock(m_mutex);
    m_closed = true;
    m_changed.notify_all();
  }

  // The next item; nullopt once it was closed and every item taken.
  std::optional<T> take() {
    std::unique_lock lock(m_mutex);
    m_changed.wait(lock, [&] { return m_closed || !m_items.empty(); });
    if (m_items.empty()) return std::nullopt;
    T item = std::move(m_items.front());
    m_items.pop_front();
    m_changed.notify_all();
    return item;
  }

  // The taker takes no more.
  void stop() {
    std::lock_guard lock(m_mutex);
    m_stopped = true;
    m_items.clear();
    m_changed.notify_all();
  }

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::deque<T> m_items;
  std::size_t m_capacity;
  bool m_closed = false;
  bool m_stopped = false;
};

}  // namespace runner
