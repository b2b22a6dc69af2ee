// The queue lock: `<queue>.lock`, created with O_CREAT|O_EXCL holding the
// owner's pid, kept open while held, removed on release: the protocol Pegasus uses, so both tools
// can share a queue. A lock whose pid is not a live process is broken with a
// warning (through the `warn` callback), never silently. A lock file with no
// pid in it (Pegasus writes none) counts as held for as long as it exists.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runner/core/file_system.h"
#include "runner/core/result.h"

namespace runner {

class QueueLock {
 public:
  using Warn = std::function<void(const std::string&)>;

  // `queue_path` is the queue's real path (real_queue_path), so that a
  // queue reached through a symbolic link and through its target has one
  // lock, beside the target. Tries once. Returns nullopt when another live process holds the lock;
  // `holder` (if given) then describes it ("pid 1234"). A failure for I/O
  // errors other than EEXIST. `files` does the file operations, the
  // release's too.
  static Result<std::optional<QueueLock>> try_acquire(const std::string& queue_path,
                                                      const Warn& warn,
                                                      std::string* holder = nullptr,
                                                      FileSystem& files = real_file_system());

  QueueLock(QueueLock&& other) noexcept;
  QueueLock& operator=(QueueLock&& other) noexcept;
  QueueLock(const QueueLock&) = delete;
  QueueLock& operator=(const QueueLock&) = delete;
  ~QueueLock();  // releases

  static std::string lock_path(const std::string& queue_path);  // queue_path + ".lock"

 private:
  QueueLock(FileSystem& files, std::string lock_path, FileDescriptor lock_file)
      : m_files(&files), m_lock_path(std::move(lock_path)), m_lock_file(std::move(lock_file)) {}
  FileSystem* m_files;
  std::string m_lock_path;     // empty once moved from
  FileDescriptor m_lock_file;  // the file created at m_lock_path
};

}  // namespace runner
