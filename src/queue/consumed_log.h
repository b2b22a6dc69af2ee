// Private to the queue area: consumed.yaml, the record of the jobs taken
// from a queue, appended to after each take through a descriptor kept open
// between takes. The name is looked at before each append, so a record
// moved away or removed meanwhile is started again under the name.
#pragma once

#include <sys/types.h>

#include <string>

#include "runner/core/file_system.h"
#include "runner/core/result.h"

namespace runner {

class ConsumedLog {
 public:
  ConsumedLog(FileSystem& files, std::string path) : m_files(files), m_path(std::move(path)) {}

  const std::string& path() const { return m_path; }

  // Appends `text` to the file (created if missing), starting on a new line
  // even if someone left it without a final newline. Not synced: the
  // record follows the queue, which is not synced either.
  Status append(const std::string& text);

 private:
  // The descriptor is for the file the name leads to now, opened if it was
  // not; `size` is then that file's size.
  Status open_current(off_t& size);

  FileSystem& m_files;
  std::string m_path;
  FileDescriptor m_fd;
  dev_t m_device = 0;
  ino_t m_inode = 0;
  off_t m_end = -1;  // the file's size after the last append here; -1 before one
};

}  // namespace runner
