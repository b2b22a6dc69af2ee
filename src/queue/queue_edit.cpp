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

Result<QueueEdit> QueueEdit::begin(const std::string& queue_path, FileSystem& files) {
  std::string path = real_queue_path(queue_path);
  Result<std::optional<HeldQueueFile>> held = HeldQueueFile::open(files, path);
  if (!held) return held.status();
  return QueueEdit(files, std::move(path),
                   *held ? std::make_unique<HeldQueueFile>(std::move(**held)) : nullptr);
}

QueueEdit::QueueEdit(FileSystem& files, std::string path, std::unique_ptr<HeldQueueFile> held)
    : m_files(files), m_path(std::move(path)), m_held(std::move(held)) {}

QueueEdit::QueueEdit(QueueEdit&&) noexcept = default;
QueueEdit::~QueueEdit() = default;

const std::string& QueueEdit::original() const {
  static const std::string k_no_file;
  return m_held ? m_held->text() : k_no_file;
}

Result<bool> QueueEdit::save(const std::string& text) {
  if (!m_held) {  // there was no file: there must still be none
    struct stat info {};
    if (m_files.stat(m_path, &info) == 0) return false;
    Result<std::string> temporary = write_temporary(m_files, m_path, text);
    if (!temporary) return temporary.status();
    if (Status committed = commit_temporary(m_files, *temporary, m_path, true); !committed)
      return committed;
    return true;
  }
  Result<bool> replaced = replace_keeping_appends(*m_held, m_path, text, true);
  if (!replaced || !*replaced) return replaced;
  std::this_thread::sleep_for(k_late_append_grace);
  Result<std::size_t> carried = m_held->carry_late_appends(m_path);
  if (!carried) return carried.status();
  return true;
}

}  // namespace runner
