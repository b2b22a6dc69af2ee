// JobLogs: buffered per-job log files under a bounded number of open
// descriptors.
#include "runner/state/job_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "runner/state/state_dir.h"

namespace runner {

namespace {

// How much of a log is written between write-behind steps.
constexpr std::uint64_t k_write_behind = 8u << 20;

// How far past its end a long log has disk space reserved.
constexpr std::uint64_t k_reserve_ahead = 16u << 20;

std::string errno_text() { return std::strerror(errno); }

}  // namespace

JobLogs::JobLogs(std::string state_dir, std::size_t max_open_files, std::size_t buffer_size,
                 FileSystem& files)
    : m_files(files),
      m_state_dir(std::move(state_dir)),
      m_max_open(max_open_files == 0 ? 1 : max_open_files),
      m_buffer_size(buffer_size) {}

JobLogs::~JobLogs() {
  // Callers flush (and hear about failures) before; this only saves bytes.
  static_cast<void>(flush());
  for (auto& [job, log] : m_logs) close_fd(log);
}

std::string JobLogs::path(LogId job) const {
  std::string name = std::to_string(job.job);
  if (job.rank) name += "." + std::to_string(*job.rank);
  return logs_dir(m_state_dir) + "/" + name + ".log";
}

void JobLogs::close_fd(Log& log) {
  if (!log.fd.valid()) return;
  if (log.reserved > 0) {
    // Releases the space reserved past the end: a truncation to the
    // file's own size, as it is now, which keeps every byte.
    struct stat info {};
    if (m_files.fstat(log.fd.get(), &info) == 0)
      static_cast<void>(m_files.ftruncate(log.fd.get(), info.st_size));
    log.reserved = 0;
  }
  // Every write was checked when it was made; a log is never fsync'd.
  static_cast<void>(log.fd.close());
  --m_open_files;
}

void JobLogs::evict_one(LogId keep) {
  Log* oldest = nullptr;
  for (auto& [job, log] : m_logs) {
    if (job == keep || !log.fd.valid()) continue;
    if (!oldest || log.last_use < oldest->last_use) oldest = &log;
  }
  if (oldest) close_fd(*oldest);
}

Status JobLogs::ensure_fd(LogId job, Log& log) {
  log.last_use = ++m_tick;
  if (log.fd.valid()) return Status();
  if (m_open_files >= m_max_open) evict_one(job);
  bool empty_it = !log.created && !log.keep_earlier;
  int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (empty_it ? O_TRUNC : 0);
  log.fd = m_files.open(path(job), flags, 0644);
  if (!log.fd.valid())
    return Status::error("cannot open the job log " + path(job) + ": " + errno_text());
  log.created = true;
  off_t size = m_files.lseek(log.fd.get(), 0, SEEK_END);
  log.end = size > 0 ? static_cast<std::uint64_t>(size) : 0;
  ++m_open_files;
  return Status();
}

Status JobLogs::write_fully(LogId job, Log& log, std::string_view bytes, std::size_t& written) {
  written = 0;
  while (written < bytes.size()) {
    ssize_t n = m_files.write(log.fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return Status::error("cannot write the job log " + path(job) + ": " + errno_text());
    }
    written += static_cast<std::size_t>(n);
    log.end += static_cast<std::uint64_t>(n);
  }
  return Status();
}

Status JobLogs::lose(Log& log, std::size_t bytes, Status reason) {
  log.lost += bytes;
  log.unmarked += bytes;
  if (log.lost_reason.empty()) log.lost_reason = reason.message();
  return reason;
}

Status JobLogs::write_out(LogId job, Log& log, std::string_view bytes) {
  if (Status opened = ensure_fd(job, log); !opened.ok()) return lose(log, bytes.size(), opened);
  std::size_t written = 0;
  if (log.unmarked > 0) {
    // Where output is missing, the log says so.
    std::string mark = fmt::format("\n--- runner: {} bytes of output are missing here ({}) ---\n",
                                   log.unmarked, log.lost_reason);
    if (Status marked = write_fully(job, log, mark, written); !marked.ok())
      return lose(log, bytes.size(), marked);
    log.unmarked = 0;
  }
  if (Status status = write_fully(job, log, bytes, written); !status.ok())
    return lose(log, bytes.size() - written, status);
  write_behind(log);
  return Status();
}

void JobLogs::write_behind(Log& log) {
  if (log.end < log.written_back + k_write_behind) return;
  // What was handed to writeback one step ago is on disk by now (or
  // nearly): release it. Failures only mean the pages stay cached.
  if (log.written_back > log.released) {
    m_files.drop_cache(log.fd.get(), static_cast<off_t>(log.released),
                       static_cast<off_t>(log.written_back - log.released));
    log.released = log.written_back;
  }
  m_files.start_writeback(log.fd.get(), static_cast<off_t>(log.written_back),
                          static_cast<off_t>(log.end - log.written_back));
  log.written_back = log.end;
  std::uint64_t from = std::max(log.reserved, log.end);
  m_files.reserve(log.fd.get(), static_cast<off_t>(from),
                  static_cast<off_t>(log.end + k_reserve_ahead - from));
  log.reserved = log.end + k_reserve_ahead;
}

Status JobLogs::drain(LogId job, Log& log) {
  if (log.buffer.empty()) return Status();
  Status status = write_out(job, log, log.buffer);
  // Bytes that could not be written are dropped (and counted) rather than
  // kept and retried forever.
  log.buffer.clear();
  return status;
}

Status JobLogs::open(LogId job, bool keep_earlier_output) {
  auto [it, inserted] = m_logs.try_emplace(job);
  Log& log = it->second;
  if (!inserted) {
    log.buffer.clear();
    close_fd(log);
  }
  if (!keep_earlier_output) log.written_back = log.released = 0;
  log.created = false;
  log.keep_earlier = keep_earlier_output;
  log.lost = log.unmarked = 0;
  log.lost_reason.clear();
  Status opened = ensure_fd(job, log);
  if (!opened.ok()) log.lost_reason = opened.message();
  return opened;
}

Status JobLogs::append(LogId job, std::string_view bytes) {
  auto it = m_logs.find(job);
  if (it == m_logs.end())
    return Status::error("output for job " + std::to_string(job.job) + " whose log is not open");
  Log& log = it->second;
  if (log.buffer.size() + bytes.size() <= m_buffer_size) {
    if (log.buffer.capacity() < m_buffer_size) log.buffer.reserve(m_buffer_size);
    log.buffer.append(bytes);
    return Status();
  }
  Status status = drain(job, log);
  if (bytes.size() >= m_buffer_size) return status.update(write_out(job, log, bytes));
  log.buffer.append(bytes);
  return status;
}

Status JobLogs::close(LogId job) {
  auto it = m_logs.find(job);
  if (it == m_logs.end()) return Status();
  Log& log = it->second;
  // A log that never opened may still be created now, if it has output.
  static_cast<void>(drain(job, log));
  Status whole;
  if (!log.created)
    whole = Status::error(fmt::format("its log {} could not be created ({})", path(job),
                                      log.lost_reason));
  else if (log.lost > 0)
    whole = Status::error(fmt::format("its log {} is incomplete: {} bytes of output are missing ({})",
                                      path(job), log.lost, log.lost_reason));
  close_fd(log);
  m_logs.erase(it);
  return whole;
}

Status JobLogs::flush() {
  Status status;
  for (auto& [job, log] : m_logs) status.update(drain(job, log));
  return status;
}

}  // namespace runner
