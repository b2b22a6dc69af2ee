// Private to the queue area: what this process did to its queue files, so
// that a QueueWatcher in the same process reports only news. Its own
// replacements of the queue are counted per file and not reported; a
// release of the lock is reported only when a take found the queue locked
// since the last report. Without this an idle runner wakes up for its own
// lock release, or for that of another runner on the same queue that looked
// because of ours, and they take turns looking as fast as the disk allows.
// Threading: none (one event loop per process).
#pragma once

#include <string>

namespace runner::own_changes {

// This process renamed a new file over the queue at `queue_path`.
void note_queue_replaced(const std::string& queue_path);
// True (and one fewer is left) when such a replacement was not seen yet.
bool take_queue_replaced(const std::string& queue_path);

// A take found the lock at `lock_path` held by someone else.
void note_blocked(const std::string& lock_path);
// True (and forgotten) when a take was blocked since the last call.
bool take_blocked(const std::string& lock_path);

// Forgets what was noted for the files: a watcher that starts (or lost
// events) cannot tell which events were its own.
void forget(const std::string& queue_path, const std::string& lock_path);

}  // namespace runner::own_changes
