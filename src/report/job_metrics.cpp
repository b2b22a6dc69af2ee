// Metric values of a job: its collected output files' numbers and its log's
// `metrics:` matches.
#include "runner/report/job_metrics.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>
#include <vector>

#include "runner/config/metrics.h"
#include "runner/core/file_system.h"
#include "runner/report/file_lines.h"
#include "runner/report/folder_files.h"
#include "runner/report/log_files.h"
#include "runner/state/state_dir.h"

namespace runner {

namespace {

namespace fs = std::filesystem;

bool ends_with(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() &&
         std::equal(tail.rbegin(), tail.rend(), text.rbegin(), [](char a, char b) {
           return a == std::tolower(static_cast<unsigned char>(b));
         });
}

void set_metric(Params& metrics, const std::string& name, const std::string& value) {
  for (auto& [known, old] : metrics)
    if (known == name) {
      old = value;
      return;
    }
  metrics.emplace_back(name, value);
}

bool is_number(std::string_view text) {
  if (text.empty()) return false;
  std::string copy(text);
  char* end = nullptr;
  std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && !std::isspace(static_cast<unsigned char>(copy[0]));
}

// One line of a CSV (quoted fields, "" inside quotes) or TSV (plain) file.
std::vector<std::string> split_row(std::string_view line, char separator) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (separator == ',' && c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back().push_back('"');
        ++i;
      } else {
        quoted = !quoted;
      }
    } else if (c == separator && !quoted) {
      cells.emplace_back();
    } else {
      cells.back().push_back(c);
    }
  }
  return cells;
}

Params last_row_numbers(std::string_view text, char separator) {
  std::vector<std::string_view> lines;
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
    begin = end + 1;
  }
  Params numbers;
  if (lines.size() < 2) return numbers;
  std::vector<std::string> header = split_row(lines.front(), separator);
  std::vector<std::string> last = split_row(lines.back(), separator);
  for (std::size_t i = 0; i < header.size() && i < last.size(); ++i)
    if (!header[i].empty() && is_number(last[i])) set_metric(numbers, header[i], last[i]);
  return numbers;
}

Params json_numbers(std::string_view text) {
  Params numbers;
  nlohmann::ordered_json object = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!object.is_object()) return numbers;
  for (const auto& [name, value] : object.items())
    if (value.is_number()) numbers.emplace_back(name, value.dump());
  return numbers;
}

// A JSON file is parsed whole, up to this size; a CSV's or a log's lines are
// held one at a time, each up to this length.
constexpr std::uintmax_t k_json_limit = 64 * 1024 * 1024;
constexpr std::size_t k_line_limit = 16 * 1024 * 1024;

// Jobs' metrics are read by up to this many threads at once (one per
// core): each job's files are a few system calls, round trips on a network
// file system; a reader claims this many jobs at a time.
constexpr std::size_t k_most_readers = 8;
constexpr std::size_t k_claim = 64;

std::string mib(std::uintmax_t bytes) { return fmt::format("{} MiB", bytes / (1024 * 1024)); }

// What a JSON file is read by; a file that fits in one is read without a
// look at its size.
constexpr std::size_t k_read_chunk = 64 * 1024;

// Reads into `text` until the file's end or `limit` bytes in all; a read
// shorter than asked for is a regular file's end.
Status read_up_to(int fd, const std::string& path, std::size_t limit, std::string& text) {
  char chunk[k_read_chunk];
  while (text.size() < limit) {
    std::size_t asked = std::min(sizeof chunk, limit - text.size());
    ssize_t got = ::read(fd, chunk, asked);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::error(path + ": " + std::strerror(errno));
    text.append(chunk, static_cast<std::size_t>(got));
    if (static_cast<std::size_t>(got) < asked) break;
  }
  return Status();
}

// A JSON file's text, up to k_json_limit: a file of less than a chunk is
// opened and read, nothing else; a bigger one is looked at for its size.
Result<std::string> json_text(const std::string& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::error(path + ": " + std::strerror(errno));
  std::string text;
  if (Status read = read_up_to(fd.get(), path, k_read_chunk, text); !read.ok()) return read;
  if (text.size() < k_read_chunk) return text;
  struct stat status {};
  if (::fstat(fd.get(), &status) != 0) return Status::error(path + ": " + std::strerror(errno));
  auto size = static_cast<std::uintmax_t>(status.st_size);
  if (size > k_json_limit)
    return Status::error(fmt::format("{} is {}, more than the {} a JSON file is read to", path,
                                     mib(size), mib(k_json_limit)));
  if (Status read = read_up_to(fd.get(), path, static_cast<std::size_t>(size), text); !read.ok())
    return read;
  return text;
}

// What output_numbers reads of a collected file: a JSON file whole, a CSV
// or TSV file's first line and its last (blank ones aside); nothing of any
// other file, which is not opened. An error says why a file is passed over.
Result<std::string> numbers_text(const fs::path& path) {
  std::string name = path.filename().string();
  if (ends_with(name, ".json")) return json_text(path.string());
  if (!ends_with(name, ".csv") && !ends_with(name, ".tsv")) return std::string();
  Result<std::optional<FileLine>> header = first_filled_line(path.string(), k_line_limit);
  if (!header) return header.status();
  Result<std::optional<FileLine>> last = last_filled_line(path.string(), k_line_limit);
  if (!last) return last.status();
  if (!*header || (*last)->offset <= (*header)->offset) return std::string();
  return (*header)->text + "\n" + (*last)->text;
}

// A metric of a job, its pattern compiled, and what its log gave it.
struct LogMetric {
  const std::string* name;
  const std::string* text;
  const Pattern* pattern;
  MetricMatch found;
  bool done = false;
};

// The last value of each metric's pattern in the log at `path`, the log
// read once from its end back until every metric has one; a missing log
// gives none.
void last_metrics_in_log(const std::string& path, std::vector<LogMetric>& metrics) {
  std::size_t left = metrics.size();
  if (left == 0) return;
  Result<LinesFromEnd> lines = LinesFromEnd::open(path, k_line_limit);
  if (!lines) return;
  while (left > 0) {
    Result<std::optional<FileLine>> line = lines->previous();
    if (!line) {
      for (LogMetric& metric : metrics)
        if (!metric.done && metric.found.passed_over.ok()) metric.found.passed_over = line.status();
      return;
    }
    if (!*line) return;
    for (LogMetric& metric : metrics) {
      if (metric.done) continue;
      MetricMatch found;
      if ((*line)->too_long)
        found.passed_over = Status::error("it is longer than " + mib(k_line_limit));
      else
        found = last_metric_match(*metric.pattern, (*line)->text);
      if (metric.found.passed_over.ok()) metric.found.passed_over = found.passed_over;
      if (found.value) {
        metric.found.value = std::move(found.value);
        metric.done = true;
        --left;
      }
    }
  }
}

// The log the job's metrics are read from: rank 0's for a job that spans
// hosts, else its one log.
std::string metrics_log(const std::string& state_dir, const CampaignJob& job) {
  return job.is_gang() ? task_log_path(state_dir, job.id, 0) : job_log_path(state_dir, job.id);
}

}  // namespace

Params output_numbers(std::string_view file_name, std::string_view text) {
  if (ends_with(file_name, ".json")) return json_numbers(text);
  if (ends_with(file_name, ".csv")) return last_row_numbers(text, ',');
  if (ends_with(file_name, ".tsv")) return last_row_numbers(text, '\t');
  return {};
}

bool CollectedJobs::has(JobId id) const {
  std::call_once(m_listed, [this] {
    std::error_code error;
    for (fs::directory_iterator it(outputs_dir(m_state_dir), error), end; !error && it != end;
         it.increment(error)) {
      std::string name = it->path().filename().string();
      JobId job = 0;
      auto [rest, failed] = std::from_chars(name.data(), name.data() + name.size(), job);
      if (failed == std::errc() && rest == name.data() + name.size()) m_ids.insert(job);
    }
  });
  return m_ids.count(id) > 0;
}

const Pattern* MetricPatterns::find(const std::string& text) {
  auto [it, added] = m_compiled.try_emplace(text);
  if (added && check_metric_pattern(text).ok()) {
    Result<Pattern> pattern = Pattern::compile(text);
    if (pattern) it->second = std::move(*pattern);
  }
  return it->second ? &*it->second : nullptr;
}

JobMetrics job_metrics(const std::string& state_dir, const CampaignJob& job,
                       const CollectedJobs& collected, MetricPatterns& patterns,
                       const ResultsWarning& warn) {
  JobMetrics metrics;
  // Where the run brought them, if that is still there (it is named as
  // the run saw it: a relative path is the run's working directory's).
  std::optional<FolderFiles> folder;
  if (!job.outputs_folder.empty()) folder = regular_files_under(job.outputs_folder);
  if (!folder && (job.attempt > 1 || collected.has(job.id)))
    folder = regular_files_under(attempt_outputs_dir(outputs_dir(state_dir), job.id, job.attempt));
  if (folder && folder->cut_short && warn)
    warn(fmt::format("#{}: its outputs folder holds more than {} entries; numbers are read from "
                     "the files among the first {} only",
                     job.id, k_folder_files_entries, k_folder_files_entries));
  for (const fs::path& file : folder ? folder->files : std::vector<fs::path>()) {
    Result<std::string> text = numbers_text(file);
    if (!text) {
      if (warn)
        warn(fmt::format("#{}: its output is passed over: {}", job.id, text.status().message()));
      continue;
    }
    for (const auto& [name, value] : output_numbers(file.filename().string(), *text))
      set_metric(metrics.files, name, value);
  }

  std::vector<LogMetric> wanted;
  for (const auto& [name, text] : job.metrics)
    // The queue's check lets none through; a hand-edited journal might.
    if (const Pattern* pattern = patterns.find(text))
      wanted.push_back({&name, &text, pattern, {}});
  last_metrics_in_log(metrics_log(state_dir, job), wanted);
  for (const LogMetric& metric : wanted) {
    const MetricMatch& found = metric.found;
    if (!found.passed_over.ok() && warn)
      warn(
          fmt::format("#{}: its metric `{}`: matching `{}` passed over a line of its log "
                      "({}); {}",
                      job.id, *metric.name, *metric.text, found.passed_over.message(),
                      found.value ? "its value is an earlier line's" : "it has no value"));
    if (found.value) set_metric(metrics.patterns, *metric.name, *found.value);
  }
  return metrics;
}

std::vector<JobMetrics> jobs_metrics(const std::string& state_dir,
                                     const std::vector<const CampaignJob*>& jobs,
                                     const ResultsWarning& warn) {
  std::vector<JobMetrics> metrics(jobs.size());
  std::vector<std::vector<std::string>> warnings(jobs.size());
  CollectedJobs collected(state_dir);
  // Readers claim the next k_claim jobs at a time until none are left.
  std::atomic<std::size_t> next{0};
  auto read = [&] {
    MetricPatterns patterns;
    for (std::size_t begin; (begin = next.fetch_add(k_claim)) < jobs.size();)
      for (std::size_t i = begin; i < std::min(begin + k_claim, jobs.size()); ++i)
        metrics[i] = job_metrics(state_dir, *jobs[i], collected, patterns,
                                 [&warnings, i](const std::string& text) {
                                   warnings[i].push_back(text);
                                 });
  };
  std::size_t readers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, k_most_readers);
  readers = std::min(readers, (jobs.size() + k_claim - 1) / k_claim);
  std::vector<std::exception_ptr> failures(readers);
  {
    std::vector<std::jthread> others;
    for (std::size_t r = 1; r < readers; ++r)
      others.emplace_back([&, r] {
        try {
          read();
        } catch (...) {
          failures[r] = std::current_exception();
        }
      });
    read();
  }
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
  if (warn)
    for (const std::vector<std::string>& said : warnings)
      for (const std::string& text : said) warn(text);
  return metrics;
}

ResultsTable read_results(const Campaign& campaign, ServiceRows services,
                          const ResultsWarning& warn) {
  std::vector<JobMetrics> metrics =
      jobs_metrics(campaign.state_dir, last_attempts(campaign, services), warn);
  std::size_t row = 0;
  return results_table(
      campaign, [&](const CampaignJob&) { return std::move(metrics[row++]); }, services);
}

}  // namespace runner
