// QueueWatcher: inotify on the directory of the queue's real file. This
// process's own replacements of the queue are not news, nor is a lock
// release that no take waited for (see own_changes.h).
#include "runner/queue/queue_watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "runner/queue/real_queue_path.h"

namespace runner {

QueueWatcher::QueueWatcher(const std::string& queue_path, OwnChanges& own_changes,
                           std::function<void()> on_change)
    : m_own_changes(own_changes), m_on_change(std::move(on_change)) {
  // A queue reached through a symbolic link changes in its target's folder.
  std::filesystem::path path = real_queue_path(queue_path);
  m_queue_name = path.filename().string();
  m_lock_name = m_queue_name + ".lock";
  m_queue_path = path.string();
  m_lock_path = m_queue_path + ".lock";
  m_own_changes.forget();
  m_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (m_fd < 0) throw std::system_error(errno, std::generic_category(), "inotify_init1");
  std::string dir = path.parent_path().string();
  if (inotify_add_watch(m_fd, dir.c_str(),
                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MODIFY) < 0) {
    int error = errno;
    close(m_fd);
    throw std::system_error(error, std::generic_category(), "inotify_add_watch " + dir);
  }
}

QueueWatcher::~QueueWatcher() {
  if (m_fd >= 0) close(m_fd);
}

void QueueWatcher::poll_fds(std::vector<pollfd>& out) { out.push_back({m_fd, POLLIN, 0}); }

void QueueWatcher::step(Clock::time_point) {
  alignas(inotify_event) char buffer[8192];
  bool changed = false;
  while (true) {
    ssize_t n = read(m_fd, buffer, sizeof buffer);
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
