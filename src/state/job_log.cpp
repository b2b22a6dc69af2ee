// JobLogs: buffered per-job log files under a bounded number of open
// descriptors.
#include "runner/state/job_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "runner/state/state_dir.h"

namespace runner {

namespace {

// How much of a log is written between write-behind steps.
constexpr std::uint64_t k_write_behind = 8u << 20;

}  // namespace

JobLogs::JobLogs(std::string state_dir, std::size_t max_open_files, std::size_t buffer_size)
    : m_state_dir(std::move(state_dir)),
      m_max_open(max_open_files == 0 ? 1 : max_open_files),
      m_buffer_size(buffer_size) {}

JobLogs::~JobLogs() {
  flush();
  for (auto& [job, log] : m_logs) close_fd(log);
}

std::string JobLogs::path(JobId job) const {
  return logs_dir(m_state_dir) + "/" + std::to_string(job) + ".log";
}

void JobLogs::close_fd(Log& log) {
  if (log.fd < 0) return;
  ::close(log.fd);
  log.fd = -1;
  --m_open_files;
}

void JobLogs::evict_one(JobId keep) {
  Log* oldest = nullptr;
  for (auto& [job, log] : m_logs) {
    if (job == keep || log.fd < 0) continue;
    if (!oldest || log.last_use < oldest->last_use) oldest = &log;
  }
  if (oldest) close_fd(*oldest);
}

bool JobLogs::ensure_fd(JobId job, Log& log, bool create) {
  log.last_use = ++m_tick;
  if (log.fd >= 0) return true;
  if (m_open_files >= m_max_open) evict_one(job);
  int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (create ? O_TRUNC : 0);
  log.fd = ::open(path(job).c_str(), flags, 0644);
  if (log.fd < 0) {
    m_error = "cannot open the job log " + path(job) + ": " + std::strerror(errno);
    return false;
  }
  off_t size = ::lseek(log.fd, 0, SEEK_END);
  log.end = size > 0 ? static_cast<std::uint64_t>(size) : 0;
  ++m_open_files;
  return true;
}

bool JobLogs::write_out(JobId job, Log& log, std::string_view bytes) {
  if (!ensure_fd(job, log, false)) return false;
  while (!bytes.empty()) {
    ssize_t n = ::write(log.fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      m_error = "cannot write the job log " + path(job) + ": " + std::strerror(errno);
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
    log.end += static_cast<std::uint64_t>(n);
  }
  write_behind(log);
  return true;
}

void JobLogs::write_behind(Log& log) {
  if (log.end < log.written_back + k_write_behind) return;
  // What was handed to writeback one step ago is on disk by now (or
  // nearly): release it. Failures only mean the pages stay cached.
  if (log.written_back > log.released) {
    ::posix_fadvise(log.fd, static_cast<off_t>(log.released),
                    static_cast<off_t>(log.written_back - log.released), POSIX_FADV_DONTNEED);
    log.released = log.written_back;
  }
  ::sync_file_range(log.fd, static_cast<off_t>(log.written_back),
                    static_cast<off_t>(log.end - log.written_back), SYNC_FILE_RANGE_WRITE);
  log.written_back = log.end;
}

bool JobLogs::drain(JobId job, Log& log) {
  if (log.buffer.empty()) return true;
  bool ok = write_out(job, log, log.buffer);
  // Bytes that could not be written are dropped rather than retried forever.
  log.buffer.clear();
  return ok;
}

bool JobLogs::open(JobId job, bool keep_earlier_output) {
  auto [it, inserted] = m_logs.try_emplace(job);
  Log& log = it->second;
  if (!inserted) {
    log.buffer.clear();
    close_fd(log);
  }
  if (!keep_earlier_output) log.written_back = log.released = 0;
  if (ensure_fd(job, log, !keep_earlier_output)) return true;
  m_logs.erase(it);
  return false;
}

bool JobLogs::append(JobId job, std::string_view bytes) {
  auto it = m_logs.find(job);
  if (it == m_logs.end()) {
    m_error = "output for job " + std::to_string(job) + " whose log is not open";
    return false;
  }
  Log& log = it->second;
  if (log.buffer.size() + bytes.size() <= m_buffer_size) {
    if (log.buffer.capacity() < m_buffer_size) log.buffer.reserve(m_buffer_size);
    log.buffer.append(bytes);
    return true;
  }
  bool ok = drain(job, log);
  if (bytes.size() >= m_buffer_size) return write_out(job, log, bytes) && ok;
  log.buffer.append(bytes);
  return ok;
}

bool JobLogs::close(JobId job) {
  auto it = m_logs.find(job);
  if (it == m_logs.end()) return true;
  bool ok = drain(job, it->second);
  close_fd(it->second);
  m_logs.erase(it);
  return ok;
}

bool JobLogs::flush() {
  bool ok = true;
  for (auto& [job, log] : m_logs) ok = drain(job, log) && ok;
  return ok;
}

}  // namespace runner
