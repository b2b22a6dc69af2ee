// Journal: writing records as single O_APPEND writes, and reading the
// file back line by line in one linear pass.
#include "runner/state/journal.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

#include "journal_lines.h"
#include "runner/state/journal_segments.h"

namespace runner {

namespace {

// How a run's own records (run_start, run_end) begin.
constexpr std::string_view k_run_record_start = "{\"event\":\"run_";

std::string write_error(const std::string& path) {
  return "cannot write to the journal " + path + ": " + errno_text();
}

std::string random_run_id() {
  std::random_device device;
  return fmt::format("{:08x}", device());
}

}  // namespace

std::string journal_path(const std::string& state_dir) { return state_dir + "/journal.jsonl"; }

std::string format_utc_time(std::chrono::system_clock::time_point time) {
  using namespace std::chrono;
  auto ms = duration_cast<milliseconds>(time.time_since_epoch()).count();
  long long millis = ms % 1000;
  time_t seconds = static_cast<time_t>(ms / 1000);
  if (millis < 0) {
    millis += 1000;
    --seconds;
  }
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis);
}

Journal::Journal(const std::string& state_dir, bool durable, FileSystem& files,
                 std::uint64_t segment_bytes)
    : m_files(files),
      m_state_dir(state_dir),
      m_path(journal_path(state_dir)),
      m_segment_bytes(segment_bytes),
      m_run_id(random_run_id()),
      m_durable(durable) {}

Result<Journal> Journal::open(const std::string& state_dir, bool durable, FileSystem& files,
                              std::uint64_t segment_bytes) {
  Journal journal(state_dir, durable, files, segment_bytes);
  Status opened = journal.read_back();
  if (!opened) return opened;
  return journal;
}

Status Journal::read_back() {
  m_fd = m_files.open(m_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (!m_fd.valid())
    return Status::error("cannot open the journal " + m_path + ": " + errno_text());
  if (m_durable) {
    // The file itself may be new: make its directory entry durable too.
    // Best effort: the first record's fdatasync reports a failing disk.
    FileDescriptor dir = m_files.open(m_state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir.valid()) static_cast<void>(m_files.fsync(dir.get()));
  }
  bool found = false;
  auto note_job = [&](std::string_view line) {
    std::optional<JobId> job = journal_line_job(line);
    if (job) {
      m_last_job = std::max(m_last_job, *job);
      found = true;
    }
    return job;
  };
  // The live file's records go into its segment's index when it is sealed.
  auto note_live = [&](std::string_view line) {
    if (std::optional<JobId> job = note_job(line)) m_segment_jobs.push_back(*job);
    if (line.substr(0, k_run_record_start.size()) == k_run_record_start) m_segment_runs = true;
  };
  Result<std::string> tail = for_each_line(m_files, m_fd.get(), m_path, note_live);
  if (!tail) return tail.status();
  note_live(*tail);
  // Ended by the first write (write_whole), which reports it if it fails.
  m_line_open = !tail->empty();
  struct stat info {};
  if (m_files.fstat(m_fd.get(), &info) == 0) m_size = static_cast<std::uint64_t>(info.st_size);
  // Just after a rotation the live file holds no job yet: the sealed
  // segments before it do.
  Result<std::vector<std::uint64_t>> sealed = list_sealed_segments(m_state_dir);
  if (!sealed) return sealed.status();
  for (auto it = sealed->rbegin(); !found && it != sealed->rend(); ++it) {
    std::string path = sealed_segment_path(m_state_dir, *it);
    FileDescriptor segment = m_files.open(path, O_RDONLY | O_CLOEXEC);
    if (!segment.valid())
      return Status::error("cannot open the journal segment " + path + ": " + errno_text());
    Result<std::string> segment_tail = for_each_line(m_files, segment.get(), path, note_job);
    if (!segment_tail) return segment_tail.status();
    note_job(*segment_tail);
  }
  return Status::ok_status();
}

bool Journal::wants_rotation() const {
  return m_size >= m_segment_bytes && m_waiting.empty() && !m_unsynced && !m_line_open;
}

Status Journal::rotate() {
  std::string dir = sealed_segments_dir(m_state_dir);
  if (m_files.mkdir(dir, 0755) != 0 && errno != EEXIST)
    return Status::error("cannot create " + dir + ": " + errno_text());
  Result<std::vector<std::uint64_t>> sealed = list_sealed_segments(m_state_dir);
  if (!sealed) return sealed.status();
  std::uint64_t number = sealed->empty() ? 1 : sealed->back() + 1;
  std::string sealed_path = sealed_segment_path(m_state_dir, number);
  // Its index first: a reader that finds the segment finds the index. A
  // segment without one is read whole, so failing to write it loses nothing.
  static_cast<void>(write_segment_index(m_state_dir, number, m_segment_runs, m_segment_jobs));
  if (m_files.rename(m_path, sealed_path) != 0)
    return Status::error("cannot seal the journal " + m_path + " as " + sealed_path + ": " +
                         errno_text());
  FileDescriptor fresh = m_files.open(m_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (!fresh.valid()) {
    Status failed = Status::error("cannot begin a new journal " + m_path + ": " + errno_text());
    // Go on appending to the sealed file, under its old name again.
    static_cast<void>(m_files.rename(sealed_path, m_path));
    return failed;
  }
  m_fd = std::move(fresh);
  m_size = 0;
  m_segment_jobs.clear();
  m_segment_runs = false;
  // Both names must survive a crash: the directory entries are synced.
  for (const std::string& parent : {m_state_dir, dir}) {
    FileDescriptor handle = m_files.open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (handle.valid()) static_cast<void>(m_files.fsync(handle.get()));
  }
  return Status();
}

Status Journal::write_whole(std::string_view line) {
  std::string_view rest = line;
  if (m_line_open) {
    // Part of a line is there (a crash, or a cut that failed): end it first.
    while (m_files.write(m_fd.get(), "\n", 1) != 1)
      if (errno != EINTR) return Status::error(write_error(m_path));
    m_line_open = false;
  }
  while (!rest.empty()) {
    ssize_t n = m_files.write(m_fd.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      Status failed = Status::error(write_error(m_path));
      cut_partial(line.size() - rest.size());
      return failed;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
    m_size += static_cast<std::uint64_t>(n);
    m_appended += static_cast<std::uint64_t>(n);
  }
  m_unsynced = true;
  return Status();
}

void Journal::cut_partial(std::size_t written) {
  if (written == 0) return;
  // Only this process appends to the journal: its last `written` bytes are
  // the record's.
  struct stat info {};
  if (m_files.fstat(m_fd.get(), &info) == 0 && info.st_size >= static_cast<off_t>(written) &&
      m_files.ftruncate(m_fd.get(), info.st_size - static_cast<off_t>(written)) == 0) {
    m_size -= written;
    m_appended -= written;
    return;
  }
  m_line_open = true;
}

Status Journal::write_waiting() {
  while (!m_waiting.empty()) {
    Status written = write_whole(m_waiting.front());
    if (!written.ok()) {
      return Status::error(fmt::format("{} ({} record{} wait{})", written.message(),
                                       m_waiting.size(), m_waiting.size() == 1 ? "" : "s",
                                       m_waiting.size() == 1 ? "s" : ""));
    }
    m_waiting.pop_front();
  }
  return Status();
}

Status Journal::sync() {
  if (Status written = write_waiting(); !written.ok()) return written;
  if (!m_unsynced) return Status();
  if (m_files.fdatasync(m_fd.get()) != 0)
    return Status::error("cannot sync the journal " + m_path + ": " + errno_text());
  m_unsynced = false;
  return Status();
}

Status Journal::append(JournalRecord record) {
  std::string time = format_utc_time(std::chrono::system_clock::now());
  std::visit([&](auto& kind) { kind.time = std::move(time); }, record);
  if (std::optional<JobId> job = record_job(record)) m_segment_jobs.push_back(*job);
  if (std::holds_alternative<RunStartRecord>(record) ||
      std::holds_alternative<RunEndRecord>(record))
    m_segment_runs = true;
  m_waiting.push_back(journal_line(record));
  if (Status written = write_waiting(); !written.ok()) return written;
  return m_durable ? sync() : Status();
}

Status Journal::run_start(std::string_view mode, std::string_view hosts_file,
                          std::string_view queue_file) {
  RunStartRecord start;
  start.mode = mode;
  start.hosts_file = hosts_file;
  start.queue_file = queue_file;
  start.run = m_run_id;
  start.pid = static_cast<long>(::getpid());
  return append(std::move(start));
}

Status Journal::run_start(RunStartRecord start) {
  start.run = m_run_id;
  start.pid = static_cast<long>(::getpid());
  std::error_code error;
  std::string cwd = std::filesystem::current_path(error).string();
  if (!error) start.cwd = std::move(cwd);
  if (!start.slots) start.slots.emplace();
  return append(std::move(start));
}

Status Journal::job_start(JobStartRecord start) {
  m_last_job = std::max(m_last_job, start.job);
  start.run = m_run_id;
  return append(std::move(start));
}

Status Journal::job_taken_ahead(JobTakenAheadRecord taken) {
  m_last_job = std::max(m_last_job, taken.job);
  taken.run = m_run_id;
  return append(std::move(taken));
}

Status Journal::job_pgid(JobId job, const ProcessGroup& group, std::optional<int> rank) {
  return append(JobPgidRecord{{}, job, group, rank});
}

Status Journal::job_end(JobId job, const JobExit& exit, std::chrono::milliseconds duration,
                        bool rerun, std::optional<int> failed_rank) {
  JobEndRecord end;
  end.job = job;
  if (exit.signal().empty() && exit.error().empty() && exit.code() >= 0) end.exit = exit.code();
  end.signal = exit.signal();
  end.error = exit.error();
  end.lost = exit.lost();
  end.timed_out = exit.timed_out;
  end.cancelled = exit.cancelled;
  end.rerun = rerun;
  end.duration = duration;
  end.failed_rank = failed_rank;
  return append(std::move(end));
}

Status Journal::job_gpu(JobId job, int attempt, const GpuFigures& gpu) {
  return append(JobGpuRecord{{}, job, attempt, gpu});
}

Status Journal::service_ready(JobId job, std::chrono::milliseconds waited,
                              const Params& variables) {
  return append(ServiceReadyRecord{{}, job, waited, variables});
}

Status Journal::outputs(JobId job, int attempt, std::optional<int> rank, std::string_view dir,
                        const std::vector<OutputFile>& files, std::string_view missing,
                        std::string_view error) {
  return append(OutputsRecord{
      {}, job, attempt, rank, std::string(dir), files, std::string(missing), std::string(error)});
}

Status Journal::host_failed(std::string_view host, std::string_view message) {
  return append(HostFailedRecord{{}, std::string(host), std::string(message)});
}

Status Journal::run_end(std::string_view status) {
  return append(RunEndRecord{{}, m_run_id, std::string(status)});
}

}  // namespace runner
