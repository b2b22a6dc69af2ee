// QueueWatcher: inotify on the directory of the queue's real file. This
// process's own replacements of the queue are not news, nor is a lock
// release that no take waited for (see own_changes.h).
#include "runner/queue/queue_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "runner/core/inotify_failure.h"
#include "runner/queue/real_queue_path.h"

namespace runner {

Result<std::unique_ptr<QueueWatcher>> QueueWatcher::open(const std::string& queue_path,
                                                         OwnChanges& own_changes,
                                                         std::function<void()> on_change) {
  // A queue reached through a symbolic link changes in its target's folder.
  std::filesystem::path path = real_queue_path(queue_path);
  std::string dir = path.parent_path().string();
  std::string failed = "cannot watch " + dir + " for changes to the queue";
  FileDescriptor inotify(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify.valid()) return Status::error(inotify_failure(failed + ": inotify_init1", errno));
  if (inotify_add_watch(inotify.get(), dir.c_str(),
                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY) < 0)
    return Status::error(inotify_failure(failed + ": inotify_add_watch", errno));
  own_changes.forget();
  return std::unique_ptr<QueueWatcher>(new QueueWatcher(
      std::move(inotify), path.filename().string(), own_changes, std::move(on_change)));
}

QueueWatcher::QueueWatcher(FileDescriptor inotify, std::string queue_name, OwnChanges& own_changes,
                           std::function<void()> on_change)
    : m_inotify(std::move(inotify)),
      m_queue_name(std::move(queue_name)),
      m_lock_name(m_queue_name + ".lock"),
      m_own_changes(own_changes),
      m_on_change(std::move(on_change)) {}

void QueueWatcher::poll_fds(std::vector<pollfd>& out) {
  out.push_back({m_inotify.get(), POLLIN, 0});
}

void QueueWatcher::step(Clock::time_point) {
  alignas(inotify_event) char buffer[8192];
  bool changed = false;
  while (true) {
    ssize_t n = read(m_inotify.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    for (char* p = buffer; p < buffer + n;) {
      auto* event = reinterpret_cast<inotify_event*>(p);
      std::string_view name = event->len ? std::string_view(event->name) : std::string_view();
      bool queue_written = name == m_queue_name && (event->mask & ~IN_DELETE) &&
                           !((event->mask & IN_MOVED_TO) && m_own_changes.take_replaced());
      bool lock_released =
          name == m_lock_name && (event->mask & IN_DELETE) && m_own_changes.take_blocked();
      if (event->mask & IN_Q_OVERFLOW) m_own_changes.forget();
      if (queue_written || lock_released || (event->mask & IN_Q_OVERFLOW)) changed = true;
      p += sizeof(inotify_event) + event->len;
    }
  }
  if (changed) m_on_change();
}

}  // namespace runner
