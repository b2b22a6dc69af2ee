// The campaign model: journal records folded into runs and jobs, and the
// small readers (times, log tails, job ids) the observing commands share.
#include "runner/report/campaign.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <set>

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

bool is_escape_final(unsigned char c) { return c >= 0x40 && c <= 0x7E; }

// `text` without terminal escape sequences (CSI, OSC and two-byte ones).
std::string strip_escapes(std::string_view text) {
  std::string plain;
  plain.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\x1b') {
      plain.push_back(text[i]);
      continue;
    }
    if (i + 1 >= text.size()) break;
    char kind = text[i + 1];
    if (kind == '[') {
      std::size_t k = i + 2;
      while (k < text.size() && !is_escape_final(static_cast<unsigned char>(text[k]))) ++k;
      i = k;
    } else if (kind == ']') {
      std::size_t k = i + 2;
      while (k < text.size() && text[k] != '\a' && !(text[k] == '\x1b' && k + 1 < text.size())) ++k;
      i = k < text.size() && text[k] == '\x1b' ? k + 1 : k;
    } else {
      i += 1;
    }
  }
  return plain;
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

std::optional<SystemTime> parse_utc_time(std::string_view text) {
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

Campaign campaign_from_records(const std::vector<json>& records, const PidAlive& alive) {
  Campaign campaign;
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
  auto touch = [](CampaignRun* run, SystemTime time) {
    if (run) run->last_event = std::max(run->last_event, time);
  };

  for (const json& record : records) {
    std::string event = text_of(record, "event");
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
      if (auto many = record.find("slot_indices"); many != record.end() && many->is_array()) {
        for (const json& i : *many)
          if (i.is_number()) job.slot_indices.push_back(i.get<int>());
      }
      if (job.slot_indices.empty())
        job.slot_indices.push_back(static_cast<int>(number_of(record, "slot_index")));
      job.params = params_of(record);
      job.metrics = params_of(record, "metrics");
      job.line = static_cast<int>(number_of(record, "line"));
      job.attempt = static_cast<int>(number_of(record, "attempt", 1));
      job.start = time;
      CampaignRun* run = run_of(job.run);
      if (run && job.run.empty()) job.run = run->id;
      touch(run, time);
      job_index[job.id] = campaign.jobs.size();
      if (run) run->jobs.push_back(campaign.jobs.size());
      campaign.jobs.push_back(std::move(job));
    } else if (event == "job_pgid") {
      if (CampaignJob* job = job_of(record)) {
        job->pgid = static_cast<long>(number_of(record, "pgid"));
        job->start = time;  // its process started: its time counts from here
        touch(run_of(job->run), time);
      }
    } else if (event == "job_end") {
      CampaignJob* job = job_of(record);
      if (!job) continue;
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
  }

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
  std::vector<std::string> skipped;
  Campaign campaign = campaign_from_records(read_journal(journal_path(state_dir), &skipped), alive);
  campaign.state_dir = state_dir;
  campaign.skipped_lines = std::move(skipped);
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
  return job.rerun ? how + ", run again" : how;
}

SystemTime job_end_time(const CampaignJob& job, const CampaignRun* run, SystemTime now) {
  if (job.end) return std::max(job.start, job.start + job.duration);
  if (job.outcome == JobOutcome::unknown && run) return std::max(job.start, run->last_event);
  return std::max(job.start, now);
}

std::string job_log_path(const std::string& state_dir, JobId id) {
  return logs_dir(state_dir) + "/" + std::to_string(id) + ".log";
}

std::string log_tail(const std::string& path, std::size_t max_lines, std::size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string();
  struct stat info {};
  std::string data;
  if (::fstat(fd, &info) == 0) {
    off_t size = info.st_size;
    off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
    // One byte more, to tell whether the window starts at a line.
    bool cut = from > 0;
    if (cut) --from;
    data.resize(static_cast<std::size_t>(size - from));
    std::size_t got = 0;
    while (got < data.size()) {
      ssize_t n = ::pread(fd, data.data() + got, data.size() - got, from + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    data.resize(got);
    // A cut first line is not a line.
    if (cut) {
      std::size_t eol = data.find_first_of("\r\n");
      if (eol != std::string::npos && data.compare(eol, 2, "\r\n") == 0) ++eol;
      data.erase(0, eol == std::string::npos ? data.size() : eol + 1);
    }
  }
  ::close(fd);

  std::string plain = strip_escapes(data);
  std::vector<std::string_view> lines;
  std::string_view rest(plain);
  while (!rest.empty()) {
    std::size_t eol = rest.find_first_of("\r\n");
    if (eol == std::string_view::npos) {
      lines.push_back(rest);
      break;
    }
    lines.push_back(rest.substr(0, eol));
    std::size_t skip = rest.compare(eol, 2, "\r\n") == 0 ? 2 : 1;
    rest.remove_prefix(eol + skip);
  }
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string_view::npos)
    lines.pop_back();
  std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  std::string tail;
  for (std::size_t i = first; i < lines.size(); ++i) tail.append(lines[i]).push_back('\n');
  return tail;
}

std::optional<JobId> parse_job_id(std::string_view text) {
  if (!text.empty() && text.front() == '#') text.remove_prefix(1);
  JobId id = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end != text.data() + text.size() || id == 0) return std::nullopt;
  return id;
}

}  // namespace runner
