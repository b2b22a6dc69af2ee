// QueueEdit: a whole-queue edit under the lock that keeps `>>` appends.
// This process ends soon after a save, so an appender that opened the old
// file just before the rename is given a moment to write, and what it wrote
// is carried over once more.
#include "runner/queue/queue_edit.h"

#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "queue_replacement.h"
#include "runner/queue/real_queue_path.h"

namespace runner {

namespace {

constexpr auto k_late_append_grace = std::chrono::milliseconds(20);

}  // namespace

QueueEdit::QueueEdit(const std::string& queue_path, FileSystem& files)
    : m_files(files), m_path(real_queue_path(queue_path)) {
  if (std::optional<HeldQueueFile> held = HeldQueueFile::open(m_files, m_path))
    m_held = std::make_unique<HeldQueueFile>(std::move(*held));
}

QueueEdit::~QueueEdit() = default;

const std::string& QueueEdit::original() const {
  static const std::string k_no_file;
  return m_held ? m_held->text() : k_no_file;
}

bool QueueEdit::save(const std::string& text) {
  if (!m_held) {  // there was no file: there must still be none
    struct stat info {};
    if (m_files.stat(m_path, &info) == 0) return false;
    commit_temporary(m_files, write_temporary(m_files, m_path, text), m_path, true);
    return true;
  }
  if (!replace_keeping_appends(*m_held, m_path, text, true)) return false;
  std::this_thread::sleep_for(k_late_append_grace);
  m_held->carry_late_appends(m_path);
  return true;
}

}  // namespace runner
