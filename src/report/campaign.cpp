// The campaign model: journal records folded into runs and jobs, and the
// small readers (times, job ids) the observing commands share.
#include "runner/report/campaign.h"

#include <fmt/format.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <set>

#include "runner/state/journal.h"
#include "runner/state/journal_record_stream.h"
#include "runner/state/state_dir.h"
#include "runner/ui/exit_text.h"

namespace runner {

namespace {

// A gang job's tasks from its job_start, in rank order; none for a job
// without `nodes:`. A record that names nodes but lists no task is read as
// rank 0 on the job's own slots.
std::vector<CampaignTask> tasks_of_start(const JobStartRecord& start, const CampaignJob& job) {
  std::vector<CampaignTask> tasks;
  if (!start.nodes) return tasks;
  for (const TaskStartRecord& task : start.tasks)
    tasks.push_back(
        {task.rank, task.host, task.slot, task.slot_indices, task.command, 0, job.start});
  if (tasks.empty()) tasks = tasks_of(job);
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const CampaignTask& a, const CampaignTask& b) { return a.rank < b.rank; });
  return tasks;
}

SystemTime time_of(const std::string& time) { return parse_utc_time(time).value_or(SystemTime{}); }

// The slots a run's jobs used, for journals whose run_start lists none.
std::vector<CampaignSlot> slots_from_jobs(const Campaign& campaign, const CampaignRun& run) {
  std::vector<CampaignSlot> slots;
  std::set<std::pair<std::string, int>> seen;
  std::vector<std::string> host_order;
  for (std::size_t j : run.jobs) {
    const CampaignJob& job = campaign.jobs[j];
    if (std::find(host_order.begin(), host_order.end(), job.host) == host_order.end())
      host_order.push_back(job.host);
    for (int index : job.slot_indices) {
      if (!seen.insert({job.host, index}).second) continue;
      CampaignSlot slot;
      slot.host = job.host;
      slot.index = index;
      slot.label = job.slot_indices.size() == 1 ? job.slot : fmt::format("{} #{}", job.host, index);
      slots.push_back(std::move(slot));
    }
  }
  std::stable_sort(slots.begin(), slots.end(), [&](const CampaignSlot& a, const CampaignSlot& b) {
    auto ha = std::find(host_order.begin(), host_order.end(), a.host);
    auto hb = std::find(host_order.begin(), host_order.end(), b.host);
    return ha != hb ? ha < hb : a.index < b.index;
  });
  return slots;
}

}  // namespace

std::string_view outcome_name(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::running:
      return "running";
    case JobOutcome::succeeded:
      return "succeeded";
    case JobOutcome::failed:
      return "failed";
    case JobOutcome::lost:
      return "lost";
    case JobOutcome::unknown:
      return "unknown";
  }
  return "unknown";
}

const CampaignJob* Campaign::find_job(JobId id) const {
  // Ids grow with start order, but several runs may share the directory.
  for (auto it = jobs.rbegin(); it != jobs.rend(); ++it)
    if (it->id == id) return &*it;
  return nullptr;
}

const CampaignRun* Campaign::find_run(std::string_view id) const {
  for (const CampaignRun& run : runs)
    if (run.id == id) return &run;
  return nullptr;
}

const CampaignRun* Campaign::latest_run() const { return runs.empty() ? nullptr : &runs.back(); }

bool process_alive(long pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

namespace {

// The digits of text[at, at + count), or -1 when one is not a digit.
int digits_at(std::string_view text, std::size_t at, std::size_t count) {
  int value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// A time of exactly the form runner writes ("2024-05-01T12:34:56.789",
// whatever follows), without the sscanf and timegm below: a long journal
// holds hundreds of thousands. nullopt for any other form.
std::optional<SystemTime> parse_written_utc_time(std::string_view text) {
  constexpr std::string_view k_form = "0000-00-00T00:00:00.000";
  if (text.size() < k_form.size()) return std::nullopt;
  for (std::size_t i = 0; i < k_form.size(); ++i)
    if (k_form[i] != '0' && text[i] != k_form[i]) return std::nullopt;
  int year = digits_at(text, 0, 4), month = digits_at(text, 5, 2), day = digits_at(text, 8, 2),
      hour = digits_at(text, 11, 2), minute = digits_at(text, 14, 2),
      second = digits_at(text, 17, 2), millis = digits_at(text, 20, 3);
  if (std::min({year, day, hour, minute, second, millis}) < 0 || month < 1 || month > 12)
    return std::nullopt;
  // As timegm counts them: a day past the month's end goes on into the next.
  using namespace std::chrono;
  sys_days first =
      year_month_day(std::chrono::year(year), std::chrono::month(month), std::chrono::day(1));
  return SystemTime(first + days(day - 1) + hours(hour) + minutes(minute) + seconds(second) +
                    milliseconds(millis));
}

}  // namespace

std::optional<SystemTime> parse_utc_time(std::string_view text) {
  if (std::optional<SystemTime> written = parse_written_utc_time(text)) return written;
  int year, month, day, hour, minute, second, millis = 0;
  std::string copy(text);
  int matched = std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &year, &month, &day,
                            &hour, &minute, &second, &millis);
  if (matched < 6) return std::nullopt;
  struct tm utc {};
  utc.tm_year = year - 1900;
  utc.tm_mon = month - 1;
  utc.tm_mday = day;
  utc.tm_hour = hour;
  utc.tm_min = minute;
  utc.tm_sec = second;
  time_t seconds = timegm(&utc);
  return std::chrono::system_clock::from_time_t(seconds) + std::chrono::milliseconds(millis);
}

Campaign campaign_from_records(const std::vector<JournalRecord>& records, const PidAlive& alive,
                               const std::map<std::string, RunTally>& tallies,
                               std::vector<std::ptrdiff_t>* owners) {
  auto each = [&records](const RecordFold& fold) {
    for (const JournalRecord& record : records) fold(record);
  };
  return campaign_from_records(each, alive, tallies, owners);
}

namespace {

// The records folded into a campaign one by one: a function per kind.
class CampaignFold {
 public:
  CampaignFold(const std::map<std::string, RunTally>& tallies, std::vector<std::ptrdiff_t>* owners)
      : m_tallies(tallies), m_owners(owners) {
    if (m_owners) m_owners->clear();
  }

  void fold(const JournalRecord& record) {
    if (m_owners) m_owners->push_back(k_run_record);
    std::visit(*this, record);
  }

  void operator()(const RunStartRecord& start) {
    SystemTime time = time_of(start.time);
    CampaignRun run;
    run.id = start.run;
    run.pid = start.pid;
    run.mode = start.mode;
    run.hosts_file = start.hosts_file;
    run.queue_file = start.queue_file;
    run.cwd = start.cwd.value_or("");
    run.start = time;
    run.last_event = time;
    if (auto tally = m_tallies.find(run.id); tally != m_tallies.end()) {
      run.tally = tally->second;
      if (run.tally.last_event) run.last_event = std::max(time, *run.tally.last_event);
    }
    run.queued_at_start = start.queued;
    if (start.slots)
      for (const RunSlotRecord& slot : *start.slots)
        run.slots.push_back({slot.label, slot.host, slot.index, slot.params});
    m_run_index[run.id] = m_campaign.runs.size();
    m_campaign.runs.push_back(std::move(run));
  }

  void operator()(const JobStartRecord& start) {
    SystemTime time = time_of(start.time);
    CampaignJob job;
    job.id = start.job;
    job.run = start.run;
    job.command = start.command;
    job.slot = start.slot;
    job.host = start.host;
    job.slot_indices = start.slot_indices;
    job.params = start.params;
    job.metrics = start.metrics;
    job.line = start.line;
    job.attempt = start.attempt;
    job.start = time;
    job.tasks = tasks_of_start(start, job);
    job.service = start.service;
    CampaignRun* run = run_of(job.run);
    if (run && job.run.empty()) job.run = run->id;
    touch(run, time);
    m_job_index[job.id] = m_campaign.jobs.size();
    if (run) run->jobs.push_back(m_campaign.jobs.size());
    m_campaign.jobs.push_back(std::move(job));
    own(&m_campaign.jobs.back());
    // Its take ahead of need goes with its first attempt (a checkpoint
    // drops them together); a record of it that outlived the attempt would
    // say it never ran.
    if (auto taken = m_taken_ahead.find(start.job); taken != m_taken_ahead.end()) {
      if (m_owners) (*m_owners)[taken->second] = m_owners->back();
      m_taken_ahead.erase(taken);
    }
  }

  // Not a job of the campaign until its job_start; until then the record
  // is the run's, kept by every checkpoint.
  void operator()(const JobTakenAheadRecord& taken) {
    if (m_owners) m_taken_ahead[taken.job] = m_owners->size() - 1;
  }

  void operator()(const JobPgidRecord& pgid) {
    CampaignJob* job = job_of(pgid.job);
    own(job);
    if (!job) return;
    SystemTime time = time_of(pgid.time);
    // A gang job's tasks each record theirs; the job is rank 0's.
    int rank = pgid.rank.value_or(0);
    for (CampaignTask& task : job->tasks) {
      if (task.rank != rank) continue;
      task.pgid = pgid.group.id;
      task.start = time;
    }
    if (rank == 0) {
      job->pgid = pgid.group.id;
      job->start = time;  // its process started: its time counts from here
    }
    touch(run_of(job->run), time);
  }

  void operator()(const JobEndRecord& end) {
    CampaignJob* job = job_of(end.job);
    own(job);
    if (!job) return;
    SystemTime time = time_of(end.time);
    job->end = time;
    if (end.exit) job->exit = end.exit;
    job->signal = end.signal;
    job->error = end.error;
    job->duration = end.duration;
    job->timed_out = end.timed_out;
    job->cancelled = end.cancelled;
    job->rerun = end.rerun;
    if (end.failed_rank) job->failed_rank = end.failed_rank;
    if (end.gpu) job->gpu = end.gpu;  // journals of versions that wrote them here
    if (end.lost) {
      job->outcome = JobOutcome::lost;
    } else if (job->exit == 0 && job->signal.empty() && job->error.empty()) {
      job->outcome = JobOutcome::succeeded;
    } else {
      job->outcome = JobOutcome::failed;
    }
    // A later run records the end of jobs whose runner died: that is not
    // a moment of the dead run.
    if (!m_campaign.runs.empty() && m_campaign.runs.back().id == job->run)
      touch(run_of(job->run), time);
  }

  void operator()(const JobGpuRecord& gpu) {
    CampaignJob* job = attempt_of(gpu.job, gpu.attempt);
    own(job);
    if (job && gpu.gpu) job->gpu = gpu.gpu;
  }

  void operator()(const ServiceReadyRecord& ready) {
    CampaignJob* job = job_of(ready.job);
    own(job);
    if (!job) return;
    job->ready_at = time_of(ready.time);
    job->ready_variables = ready.variables;
    touch(run_of(job->run), *job->ready_at);
  }

  void operator()(const OutputsRecord& outputs) {
    CampaignJob* job = attempt_of(outputs.job, outputs.attempt);
    own(job);
    if (!job) return;
    // A rank's files are in a folder of their own below the job's.
    std::string dir = outputs.dir;
    std::string under;
    if (outputs.rank) {
      under = dir.substr(dir.rfind('/') + 1) + "/";
      dir = dir.substr(0, dir.rfind('/'));
    }
    job->outputs_folder = dir;
    for (const OutputFile& file : outputs.files)
      job->outputs.push_back({under + file.path, file.size, file.sha256});
  }

  void operator()(const HostFailedRecord& failed) {
    if (CampaignRun* run = run_of("")) {
      run->host_failures.emplace_back(failed.host, failed.message);
      touch(run, time_of(failed.time));
    }
  }

  void operator()(const RunEndRecord& end) {
    if (CampaignRun* run = run_of(end.run)) {
      SystemTime time = time_of(end.time);
      run->end = time;
      run->status = end.status;
      touch(run, time);
    }
  }

  Campaign take() { return std::move(m_campaign); }

 private:
  // The run of this id, else the latest.
  CampaignRun* run_of(const std::string& id) {
    auto it = m_run_index.find(id);
    if (it != m_run_index.end()) return &m_campaign.runs[it->second];
    return m_campaign.runs.empty() ? nullptr : &m_campaign.runs.back();
  }
  CampaignJob* job_of(JobId id) {
    auto it = m_job_index.find(id);
    return it == m_job_index.end() ? nullptr : &m_campaign.jobs[it->second];
  }
  // The attempt a record names (its files or GPU figures may come after
  // the next attempt started), else the job's latest.
  CampaignJob* attempt_of(JobId id, int attempt) {
    CampaignJob* latest = job_of(id);
    if (!latest || attempt == 0 || latest->attempt == attempt) return latest;
    for (std::size_t i = latest - m_campaign.jobs.data(); i-- > 0;)
      if (m_campaign.jobs[i].id == latest->id && m_campaign.jobs[i].attempt == attempt)
        return &m_campaign.jobs[i];
    return nullptr;
  }
  static void touch(CampaignRun* run, SystemTime time) {
    if (run) run->last_event = std::max(run->last_event, time);
  }
  // Whose the record being folded is, for one about a job.
  void own(const CampaignJob* job) {
    if (m_owners) m_owners->back() = job ? job - m_campaign.jobs.data() : k_orphan_record;
  }

  const std::map<std::string, RunTally>& m_tallies;
  std::vector<std::ptrdiff_t>* m_owners;
  Campaign m_campaign;
  std::map<std::string, std::size_t> m_run_index;
  std::map<JobId, std::size_t> m_job_index;
  // Jobs taken ahead that have not started: their record's index in m_owners.
  std::map<JobId, std::size_t> m_taken_ahead;
};

}  // namespace

Campaign campaign_from_records(const RecordSource& records, const PidAlive& alive,
                               const std::map<std::string, RunTally>& tallies,
                               std::vector<std::ptrdiff_t>* owners) {
  CampaignFold fold(tallies, owners);
  records([&](const JournalRecord& record) { fold.fold(record); });
  Campaign campaign = fold.take();
  for (CampaignRun& run : campaign.runs) {
    run.alive = !run.end && alive && alive(run.pid);
    if (run.slots.empty()) run.slots = slots_from_jobs(campaign, run);
  }
  for (CampaignJob& job : campaign.jobs) {
    if (job.outcome != JobOutcome::running) continue;
    const CampaignRun* run = campaign.find_run(job.run);
    if (!run || !run->alive) job.outcome = JobOutcome::unknown;
  }
  return campaign;
}

Result<Campaign> load_campaign(const std::string& state_dir, const PidAlive& alive) {
  // Each record folded as it is parsed, then dropped: a long journal is
  // never all in memory at once.
  Result<std::optional<JournalRead>> read = std::optional<JournalRead>();
  auto records = [&](const RecordFold& fold) { read = fold_journal_records(state_dir, fold); };
  Campaign campaign = campaign_from_records(records, alive);
  if (!read) return read.status();
  campaign.state_dir = state_dir;
  campaign.skipped_lines = std::move((*read)->skipped);
  return campaign;
}

std::string skipped_lines_warning(const Campaign& campaign) {
  std::string text;
  for (const std::string& line : campaign.skipped_lines) text += "runner: warning: " + line + "\n";
  return text;
}

std::string describe_end(const CampaignJob& job) {
  std::string how;
  if (job.outcome == JobOutcome::running) {
    how = "running";
  } else if (job.outcome == JobOutcome::unknown) {
    how = "unknown: the runner stopped before it ended";
  } else {
    JobExit exit = JobExit::from_fields(job.exit.value_or(-1), job.signal, job.error,
                                        job.outcome == JobOutcome::lost);
    // A job that ended well while it was being stopped is not called stopped.
    exit.timed_out = job.outcome == JobOutcome::failed && job.timed_out;
    exit.cancelled = job.outcome == JobOutcome::failed && job.cancelled;
    how = describe_exit(exit);
  }
  // As the run's own end note says it.
  if (job.failed_rank) how = fmt::format("rank {}: {}", *job.failed_rank, how);
  return job.rerun ? how + ", run again" : how;
}

std::string describe_placement(const CampaignJob& job) {
  if (!job.is_gang()) return job.slot;
  std::string hosts;
  for (const CampaignTask& task : job.tasks) hosts += (hosts.empty() ? "" : ", ") + task.host;
  return fmt::format("{} node{}: {}", job.tasks.size(), job.tasks.size() == 1 ? "" : "s", hosts);
}

const CampaignTask* find_task(const CampaignJob& job, int rank) {
  for (const CampaignTask& task : job.tasks)
    if (task.rank == rank) return &task;
  return nullptr;
}

std::vector<CampaignTask> tasks_of(const CampaignJob& job) {
  if (job.is_gang()) return job.tasks;
  return {CampaignTask{0, job.host, job.slot, job.slot_indices, job.command, job.pgid, job.start}};
}

std::size_t slots_held(const CampaignJob& job) {
  if (!job.is_gang()) return job.slot_indices.size();
  std::size_t slots = 0;
  for (const CampaignTask& task : job.tasks) slots += task.slot_indices.size();
  return slots;
}

std::string end_log_path(const std::string& state_dir, const CampaignJob& job) {
  if (!job.is_gang()) return job_log_path(state_dir, job.id);
  return task_log_path(state_dir, job.id, job.failed_rank.value_or(job.tasks.front().rank));
}

SystemTime job_end_time(const CampaignJob& job, const CampaignRun* run, SystemTime now) {
  if (job.end) return std::max(job.start, job.start + job.duration);
  if (job.outcome == JobOutcome::unknown && run) return std::max(job.start, run->last_event);
  return std::max(job.start, now);
}

std::optional<JobId> parse_job_id(std::string_view text) {
  if (!text.empty() && text.front() == '#') text.remove_prefix(1);
  JobId id = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || id == 0) return std::nullopt;
  return id;
}

}  // namespace runner
