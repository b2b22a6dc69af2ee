// `runner log JOB`: a job's saved output (a gang job's every rank, each
// line prefixed with its rank and host, or with --rank one rank's as
// written); with --follow, what it writes while it runs, until its end is
// in the journal (or its runner is gone). Reads the state directory only.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include "fatal.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/report/campaign.h"
#include "runner/report/rank_logs.h"
#include "runner/state/journal.h"
#include "runner/state/state_dir.h"
#include "runner/ui/console.h"
#include "runner/ui/summary.h"
#include "subcommand.h"

namespace runner {

namespace {

constexpr int k_follow_poll_ms = 100;

// Whether a journal line may be about job `id` or a run (a line about no
// job): only those are parsed, and a line that is not whole, to say so.
// Called for non-empty lines.
bool may_concern(std::string_view line, JobId id) {
  if (line.back() != '}') return true;
  std::optional<JobId> job = journal_line_job(line);
  return !job || *job == id;
}

// The records about job `id` and the runs appended to a journal since the
// last look, each whole line once.
class JournalTail {
 public:
  JournalTail(std::string state_dir, JobId id) : m_state_dir(std::move(state_dir)), m_id(id) {}

  std::vector<JournalRecord> read_new() {
    auto keep = [this](std::string_view line) { return may_concern(line, m_id); };
    auto wanted = [this](const SegmentIndex& index) { return index.runs || index.mentions(m_id); };
    std::optional<JournalRead> read =
        value_or_fatal(read_journal_from(m_state_dir, m_position, keep, wanted));
    if (!read) return {};  // not the journal it was: nothing more of it
    // A line still being written is read again next time.
    if (read->tail_skipped) read->skipped.pop_back();
    for (const std::string& skipped : read->skipped) {
      std::fflush(stderr);
      write_all(STDERR_FILENO, "runner: warning: " + skipped + "\n");
    }
    // One whose newline is not written yet comes again, whole.
    if (read->unterminated_tail) read->records.pop_back();
    m_position = read->end;
    std::vector<JournalRecord> records;
    for (const nlohmann::json& value : read->records)
      if (Result<JournalRecord> record = record_from_json(value))
        records.push_back(std::move(*record));
    return records;
  }

 private:
  std::string m_state_dir;
  JobId m_id;
  JournalPosition m_position;
};

// Copies the bytes of `path` from `offset` on to stdout; returns the new offset.
off_t copy_from(const std::string& path, off_t offset) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return offset;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!write_all(STDOUT_FILENO, std::string_view(buffer, static_cast<std::size_t>(n)))) break;
    offset += n;
  }
  ::close(fd);
  return offset;
}

bool write_out(std::string_view text) { return write_all(STDOUT_FILENO, text); }

// What `runner log` copies to stdout: one log as written (a job's, or a
// gang job's rank with --rank), or a gang job's rank logs prefixed. Which
// one is known once the job's start is read.
class LogCopy {
 public:
  LogCopy(std::string state_dir, JobId id, std::optional<int> rank)
      : m_state_dir(std::move(state_dir)),
        m_id(id),
        m_rank(rank),
        m_path(rank ? task_log_path(m_state_dir, id, *rank) : job_log_path(m_state_dir, id)) {}

  // The job as its journal says so far; throws when --rank does not fit it.
  void started(const CampaignJob& job) {
    if (m_rank && !job.is_gang())
      throw ConfigError(m_state_dir, 0, 0,
                        fmt::format("job #{} has no ranks (it has no nodes:); show its log "
                                    "without --rank",
                                    m_id));
    if (m_rank && std::none_of(job.tasks.begin(), job.tasks.end(),
                               [&](const CampaignTask& task) { return task.rank == *m_rank; }))
      throw ConfigError(m_state_dir, 0, 0,
                        fmt::format("job #{} has no rank {}: it runs on {}", m_id, *m_rank,
                                    describe_placement(job)));
    if (!m_rank && job.is_gang() && !m_ranks) m_ranks.emplace(m_state_dir, job);
  }

  // Whether there is anything to show before the job is in the journal.
  bool exists() const { return std::filesystem::exists(m_path); }

  // Copies what the logs gained; with `to_end`, a gang log's unended last
  // lines too.
  void copy(bool to_end) {
    if (m_ranks) {
      m_ranks->copy_new(write_out, to_end);
    } else {
      m_offset = copy_from(m_path, m_offset);
    }
  }

 private:
  std::string m_state_dir;
  JobId m_id;
  std::optional<int> m_rank;
  std::string m_path;
  off_t m_offset = 0;
  std::optional<RankLogs> m_ranks;
};

}  // namespace

int show_log(const LogOptions& options) {
  std::optional<JobId> id = parse_job_id(options.job);
  if (!id) {
    throw ConfigError("'" + options.job +
                      "' is not a job id: give the number shown as #12 (runner status lists them)");
  }
  std::string state_dir =
      options.state_dir.empty() ? state_dir_for(options.queue_file) : options.state_dir;
  LogCopy log(state_dir, *id, options.rank);
  JournalTail journal(state_dir, *id);
  std::vector<JournalRecord> records = journal.read_new();
  Campaign campaign = campaign_from_records(records);
  const CampaignJob* job = campaign.find_job(*id);
  if (job) log.started(*job);
  std::fflush(stdout);

  if (!options.follow) {
    if (!job && !log.exists())
      throw ConfigError(state_dir, 0, 0, fmt::format("no job #{} has run here", *id));
    log.copy(true);
    return 0;
  }

  // The run the job belongs to, or the live run it may still start in.
  std::map<std::string, long> run_pids;
  for (const CampaignRun& run : campaign.runs) run_pids[run.id] = run.pid;
  bool started = job != nullptr;
  bool ended = job && job->outcome != JobOutcome::running;
  long pid = job ? run_pids[job->run] : 0;
  auto any_run_alive = [&] {
    for (const auto& [run, run_pid] : run_pids)
      if (process_alive(run_pid)) return true;
    return false;
  };
  if (!started) {
    if (!any_run_alive())
      throw ConfigError(state_dir, 0, 0,
                        fmt::format("no job #{} has run here, and no run is going on", *id));
    std::fflush(stderr);
    write_all(STDERR_FILENO, fmt::format("runner: waiting for job #{} to start\n", *id));
  }

  while (true) {
    log.copy(ended);
    if (ended) break;
    for (const JournalRecord& record : journal.read_new()) {
      records.push_back(record);
      if (const auto* run = std::get_if<RunStartRecord>(&record)) run_pids[run->run] = run->pid;
      if (const auto* start = std::get_if<JobStartRecord>(&record); start && start->job == *id) {
        started = true;
        pid = run_pids[start->run];
        if (const CampaignJob* now = campaign_from_records({record}).find_job(*id))
          log.started(*now);
      }
      if (const auto* end = std::get_if<JobEndRecord>(&record); end && end->job == *id)
        ended = true;
    }
    if (ended) continue;  // copy what the job wrote last, then stop
    if (started ? !process_alive(pid) : !any_run_alive()) {
      log.copy(true);
      std::fflush(stderr);
      write_all(STDERR_FILENO, fmt::format("runner: the runner stopped before job #{} {}\n", *id,
                                           started ? "ended" : "started"));
      return 1;
    }
    ::poll(nullptr, 0, k_follow_poll_ms);
  }

  Campaign final_state = campaign_from_records(records);
  if (const CampaignJob* done = final_state.find_job(*id)) {
    std::fflush(stderr);
    write_all(
        STDERR_FILENO,
        fmt::format("runner: #{} [{}] {} after {}\n", done->id, describe_placement(*done),
                    done->outcome == JobOutcome::succeeded ? "succeeded" : describe_end(*done),
                    format_duration(done->duration)));
  }
  return 0;
}

Subcommand add_log_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<LogOptions>();
  auto* log = add_campaign_command(app, "log", "Print a job's saved output", defaults,
                                   options->queue_file, options->state_dir);
  log->add_option("job", options->job, "The job's id (12 or #12)")->required();
  log->add_flag("-f,--follow", options->follow, "Keep printing while the job runs");
  log->add_option("--rank", options->rank,
                  "For a job with nodes: only this rank's log, as written (default: every "
                  "rank's, each line prefixed with its rank and host)");
  set_example(*log, "runner log --queue-file queue.yaml --follow 12");
  return {log, [options] { return show_log(*options); }};
}

}  // namespace runner
