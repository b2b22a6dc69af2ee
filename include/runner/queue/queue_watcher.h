// Notices, through inotify on its directory (that of the file a symbolic
// link leads to, when the queue is one), when the queue file is written
// or replaced and when its lock is released, so a waiting runner picks up
// new jobs at once instead of polling. Replacements of the queue made by
// its QueueFile are not reported, nor are releases of the lock unless that
// QueueFile found it held since the last one (OwnChanges).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "runner/core/file_system.h"
#include "runner/core/pollable.h"
#include "runner/core/result.h"
#include "runner/queue/own_changes.h"

namespace runner {

class QueueWatcher final : public Pollable {
 public:
  // Watches the folder of the queue at `queue_path`, or says why it cannot
  // (inotify's limits reached, a folder that cannot be watched).
  // `own_changes`: those of the QueueFile that takes from this queue; it
  // must outlive the watcher.
  static Result<std::unique_ptr<QueueWatcher>> open(const std::string& queue_path,
                                                    OwnChanges& own_changes,
                                                    std::function<void()> on_change);
  QueueWatcher(const QueueWatcher&) = delete;
  QueueWatcher& operator=(const QueueWatcher&) = delete;

  void poll_fds(std::vector<pollfd>& out) override;
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

 private:
  QueueWatcher(FileDescriptor inotify, std::string queue_name, OwnChanges& own_changes,
               std::function<void()> on_change);

  FileDescriptor m_inotify;
  std::string m_queue_name;
  std::string m_lock_name;
  OwnChanges& m_own_changes;
  std::function<void()> m_on_change;
};

}  // namespace runner
