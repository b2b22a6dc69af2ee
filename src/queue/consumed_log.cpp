// consumed.yaml, kept open between takes (see consumed_log.h).
#include "consumed_log.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "file_io.h"

namespace runner {

using file_io::io_failure;

Status ConsumedLog::open_current(off_t& size) {
  struct stat named {};
  if (m_fd.valid() && m_files.stat(m_path, &named) == 0 && named.st_dev == m_device &&
      named.st_ino == m_inode) {
    size = named.st_size;
    return Status();
  }
  m_fd = m_files.open(m_path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (!m_fd.valid()) return io_failure(errno, "cannot open " + m_path);
  struct stat opened {};
  if (m_files.fstat(m_fd.get(), &opened) != 0) {
    m_fd = FileDescriptor();
    return io_failure(errno, "cannot open " + m_path);
  }
  m_device = opened.st_dev;
  m_inode = opened.st_ino;
  m_end = -1;
  size = opened.st_size;
  return Status();
}

Status ConsumedLog::append(const std::string& text) {
  off_t size = 0;
  if (Status opened = open_current(size); !opened) return opened;
  std::string out = text;
  // Only a file someone else wrote to since the last append here may end
  // without a newline.
  char last = '\n';
  if (size > 0 && size != m_end && m_files.pread(m_fd.get(), &last, 1, size - 1) == 1 &&
      last != '\n')
    out.insert(out.begin(), '\n');
  if (Status written = file_io::write_all(m_files, m_fd.get(), out, m_path); !written) {
    m_end = -1;
    return written;
  }
  m_end = size + static_cast<off_t>(out.size());
  return Status();
}

}  // namespace runner
