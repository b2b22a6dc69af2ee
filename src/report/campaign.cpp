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

#include "runner/state/gpu_figures_record.h"
#include "runner/state/journal.h"
#include "runner/state/journal_text.h"
#include "runner/state/state_dir.h"
#include "runner/ui/exit_text.h"

namespace runner {

namespace {

using nlohmann::json;

std::string text_of(const json& record, const char* key) { return journal_text(record, key); }

long long number_of(const json& record, const char* key, long long fallback = 0) {
  auto it = record.find(key);
  return it != record.end() && it->is_number() ? it->get<long long>() : fallback;
}

Params params_of(const json& record, const char* key = "params") {
  Params params;
  auto it = record.find(key);
  if (it == record.end() || !it->is_object()) return params;
  for (const auto& [key, value] : it->items())
    params.emplace_back(
        key, value.is_string() || value.is_object() ? journal_text(value) : value.dump());
  return params;
}

std::vector<int> slot_indices_of(const json& record) {
  std::vector<int> indices;
  if (auto many = record.find("slot_indices"); many != record.end() && many->is_array()) {
    for (const json& i : *many)
      if (i.is_number()) indices.push_back(i.get<int>());
  }
  if (indices.empty()) indices.push_back(static_cast<int>(number_of(record, "slot_index")));
  return indices;
}

// A gang job's tasks from its job_start, in rank order; none for a job
// without `nodes:`. A record that names nodes but lists no task is read as
// rank 0 on the job's own slots.
std::vector<CampaignTask> tasks_of_start(const json& record, const CampaignJob& job) {
  std::vector<CampaignTask> tasks;
  if (!record.contains("nodes")) return tasks;
  if (auto list = record.find("tasks"); list != record.end() && list->is_array()) {
    for (const json& item : *list) {
      if (!item.is_object()) continue;
      CampaignTask task;
      task.rank = static_cast<int>(number_of(item, "rank"));
      task.host = text_of(item, "host");
      task.slot = text_of(item, "slot");
      task.slot_indices = slot_indices_of(item);
      task.command = text_of(item, "command");
      task.start = job.start;
      tasks.push_back(std::move(task));
    }
  }
  if (tasks.empty()) tasks = tasks_of(job);
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const CampaignTask& a, const CampaignTask& b) { return a.rank < b.rank; });
  return tasks;
}

SystemTime time_of(const json& record) {
  return parse_utc_time(text_of(record, "time")).value_or(SystemTime{});
}

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

Campaign campaign_from_records(const std::vector<json>& records, const PidAlive& alive,
                               const std::map<std::string, RunTally>& tallies,
                               std::vector<std::ptrdiff_t>* owners) {
  auto each = [&records](const RecordFold& fold) {
    for (const json& record : records) fold(record);
  };
  return campaign_from_records(each, alive, tallies, owners);
}

Campaign campaign_from_records(const RecordSource& records, const PidAlive& alive,
                               const std::map<std::string, RunTally>& tallies,
                               std::vector<std::ptrdiff_t>* owners) {
  Campaign campaign;
  if (owners) owners->clear();
  std::map<std::string, std::size_t> run_index;
  std::map<JobId, std::size_t> job_index;
  auto run_of = [&](const std::string& id) -> CampaignRun* {
    auto it = run_index.find(id);
    if (it != run_index.end()) return &campaign.runs[it->second];
    return campaign.runs.empty() ? nullptr : &campaign.runs.back();
  };
  auto job_of = [&](const json& record) -> CampaignJob* {
    auto it = job_index.find(static_cast<JobId>(number_of(record, "job")));
    return it == job_index.end() ? nullptr : &campaign.jobs[it->second];
  };
  // The attempt a record names (its files may come back after the next
  // attempt started), else the job's latest.
  auto attempt_of = [&](const json& record) -> CampaignJob* {
    CampaignJob* latest = job_of(record);
    int attempt = static_cast<int>(number_of(record, "attempt", 0));
    if (!latest || attempt == 0 || latest->attempt == attempt) return latest;
    for (std::size_t i = latest - campaign.jobs.data(); i-- > 0;)
      if (campaign.jobs[i].id == latest->id && campaign.jobs[i].attempt == attempt)
        return &campaign.jobs[i];
    return nullptr;
  };
  auto touch = [](CampaignRun* run, SystemTime time) {
    if (run) run->last_event = std::max(run->last_event, time);
  };

  records([&](const json& record) {
    std::string event = text_of(record, "event");
    if (owners) owners->push_back(k_run_record);
    // Whose it is, for a record about a job.
    auto own = [&](const CampaignJob* job) {
      if (owners) owners->back() = job ? job - campaign.jobs.data() : k_orphan_record;
    };
    SystemTime time = time_of(record);
    if (event == "run_start") {
      CampaignRun run;
      run.id = text_of(record, "run");
      run.pid = static_cast<long>(number_of(record, "pid"));
      run.mode = text_of(record, "mode");
      run.hosts_file = text_of(record, "hosts_file");
      run.queue_file = text_of(record, "queue_file");
      run.cwd = text_of(record, "cwd");
      run.start = time;
      run.last_event = time;
      if (auto tally = tallies.find(run.id); tally != tallies.end()) {
        run.tally = tally->second;
        if (run.tally.last_event) run.last_event = std::max(time, *run.tally.last_event);
      }
      if (auto q = record.find("queued"); q != record.end() && q->is_number_integer() && *q >= 0)
        run.queued_at_start = q->get<std::size_t>();
      if (auto slots = record.find("slots"); slots != record.end() && slots->is_array()) {
        for (const json& item : *slots) {
          if (!item.is_object()) continue;
          CampaignSlot slot;
          slot.label = text_of(item, "label");
          slot.host = text_of(item, "host");
          slot.index = static_cast<int>(number_of(item, "index"));
          slot.params = params_of(item);
          run.slots.push_back(std::move(slot));
        }
      }
      run_index[run.id] = campaign.runs.size();
      campaign.runs.push_back(std::move(run));
    } else if (event == "job_start") {
      CampaignJob job;
      job.id = static_cast<JobId>(number_of(record, "job"));
      job.run = text_of(record, "run");
      job.command = text_of(record, "command");
      job.slot = text_of(record, "slot");
      job.host = text_of(record, "host");
      job.slot_indices = slot_indices_of(record);
      job.params = params_of(record);
      job.metrics = params_of(record, "metrics");
      job.line = static_cast<int>(number_of(record, "line"));
      job.attempt = static_cast<int>(number_of(record, "attempt", 1));
      job.start = time;
      job.tasks = tasks_of_start(record, job);
      job.service = text_of(record, "service");
      CampaignRun* run = run_of(job.run);
      if (run && job.run.empty()) job.run = run->id;
      touch(run, time);
      job_index[job.id] = campaign.jobs.size();
      if (run) run->jobs.push_back(campaign.jobs.size());
      campaign.jobs.push_back(std::move(job));
      own(&campaign.jobs.back());
    } else if (event == "job_pgid") {
      own(job_of(record));
      if (CampaignJob* job = job_of(record)) {
        // A gang job's tasks each record theirs; the job is rank 0's.
        int rank = static_cast<int>(number_of(record, "rank"));
        long pgid = static_cast<long>(number_of(record, "pgid"));
        for (CampaignTask& task : job->tasks) {
          if (task.rank != rank) continue;
          task.pgid = pgid;
          task.start = time;
        }
        if (rank == 0) {
          job->pgid = pgid;
          job->start = time;  // its process started: its time counts from here
        }
        touch(run_of(job->run), time);
      }
    } else if (event == "job_end") {
      CampaignJob* job = job_of(record);
      own(job);
      if (!job) return;
      job->end = time;
      if (auto exit = record.find("exit"); exit != record.end() && exit->is_number())
        job->exit = exit->get<int>();
      job->signal = text_of(record, "signal");
      job->error = text_of(record, "error");
      bool lost = record.value("lost", false);
      job->duration = std::chrono::milliseconds(number_of(record, "duration_ms"));
      job->timed_out = record.value("timed_out", false);
      job->cancelled = record.value("cancelled", false);
      job->rerun = record.value("rerun", false);
      if (auto rank = record.find("failed_rank"); rank != record.end() && rank->is_number_integer())
        job->failed_rank = rank->get<int>();
      job->gpu.reset();
      if (auto gpu = record.find(k_gpu_figures_key); gpu != record.end())
        job->gpu = gpu_figures_of(*gpu);
      if (lost) {
        job->outcome = JobOutcome::lost;
      } else if (job->exit == 0 && job->signal.empty() && job->error.empty()) {
        job->outcome = JobOutcome::succeeded;
      } else {
        job->outcome = JobOutcome::failed;
      }
      // A later run records the end of jobs whose runner died: that is not
      // a moment of the dead run.
      if (!campaign.runs.empty() && campaign.runs.back().id == job->run)
        touch(run_of(job->run), time);
    } else if (event == "service_ready") {
      own(job_of(record));
      if (CampaignJob* job = job_of(record)) {
        job->ready_at = time;
        job->ready_variables = params_of(record, "variables");
        touch(run_of(job->run), time);
      }
    } else if (event == "outputs") {
      own(attempt_of(record));
      if (CampaignJob* job = attempt_of(record)) {
        // A rank's files are in a folder of their own below the job's.
        std::string dir = text_of(record, "dir");
        std::string under;
        if (record.contains("rank")) {
          under = dir.substr(dir.rfind('/') + 1) + "/";
          dir = dir.substr(0, dir.rfind('/'));
        }
        job->outputs_folder = dir;
        if (auto files = record.find("files"); files != record.end() && files->is_array())
          for (const json& file : *files)
            if (file.is_object())
              job->outputs.push_back({under + text_of(file, "path"),
                                      static_cast<std::uint64_t>(number_of(file, "size")),
                                      text_of(file, "sha256")});
      }
    } else if (event == "host_failed") {
      if (CampaignRun* run = run_of("")) {
        run->host_failures.emplace_back(text_of(record, "host"), text_of(record, "message"));
        touch(run, time);
      }
    } else if (event == "run_end") {
      if (CampaignRun* run = run_of(text_of(record, "run"))) {
        run->end = time;
        run->status = text_of(record, "status");
        touch(run, time);
      }
    }
  });

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

Campaign load_campaign(const std::string& state_dir, const PidAlive& alive) {
  // Each record folded as it is parsed, then dropped: a long journal is
  // never all in memory at once.
  std::optional<JournalRead> read;
  auto records = [&](const RecordFold& fold) {
    read = read_journal_from(state_dir, {}, {}, {}, SIZE_MAX,
                             [&](json&& record, std::string_view) { fold(record); });
  };
  Campaign campaign = campaign_from_records(records, alive);
  campaign.state_dir = state_dir;
  campaign.skipped_lines = std::move(read->skipped);
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
