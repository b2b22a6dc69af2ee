// An edit of the whole queue made under its lock (`runner lock`, `runner
// add`): the text as it was when the edit began, and a save that replaces
// the queue by the new text without losing the jobs that were appended to
// it with `>>` meanwhile (such appenders take no lock).
#pragma once

#include <memory>
#include <string>

#include "runner/core/file_system.h"
#include "runner/core/result.h"

namespace runner {

class HeldQueueFile;

class QueueEdit {
 public:
  // Reads the queue at `queue_path` (its real path: links resolved) and
  // keeps it open; a missing file reads as empty. The caller holds the
  // queue lock. A failure when it cannot be read. `files` does the file
  // operations.
  static Result<QueueEdit> begin(const std::string& queue_path,
                                 FileSystem& files = real_file_system());
  ~QueueEdit();
  QueueEdit(QueueEdit&&) noexcept;
  QueueEdit(const QueueEdit&) = delete;
  QueueEdit& operator=(const QueueEdit&) = delete;

  const std::string& original() const;  // empty when there was no file

  // Replaces the queue by `text` followed by whatever was appended to it
  // since it was read. Returns false, replacing nothing, when it was changed
  // otherwise meanwhile (an editor that saved without the lock). A failure
  // when it cannot be written.
  Result<bool> save(const std::string& text);

 private:
  QueueEdit(FileSystem& files, std::string path, std::unique_ptr<HeldQueueFile> held);

  FileSystem& m_files;
  std::string m_path;
  std::unique_ptr<HeldQueueFile> m_held;  // null when there was no file
};

}  // namespace runner
