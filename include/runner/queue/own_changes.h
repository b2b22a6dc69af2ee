// What one QueueFile did to its queue file, so that a QueueWatcher of that
// file reports only news: the file's own replacements are counted and not
// reported, and a release of the lock is reported only when a take found the
// queue locked since the last report. Without this an idle runner wakes up
// for its own lock release, or for that of another runner on the same queue
// that looked because of ours, and they take turns looking as fast as the
// disk allows. Owned by the QueueFile; the watcher is given it.
#pragma once

#include <utility>

namespace runner {

class OwnChanges {
 public:
  // This process renamed a new file over the queue.
  void note_replaced() { ++m_replaced; }
  // True (and one fewer is left) when such a replacement was not seen yet.
  bool take_replaced() {
    if (m_replaced <= 0) return false;
    --m_replaced;
    return true;
  }
  // A take found the lock held by someone else.
  void note_blocked() { m_blocked = true; }
  // True (and forgotten) when a take was blocked since the last call.
  bool take_blocked() { return std::exchange(m_blocked, false); }
  // A watcher that starts (or lost events) cannot tell which events were
  // its own.
  void forget() { *this = OwnChanges(); }

 private:
  int m_replaced = 0;
  bool m_blocked = false;
};

}  // namespace runner
