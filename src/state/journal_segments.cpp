// Reading the journal back: its segments, from a position, line by line in
// one linear pass.
#include "runner/state/journal_segments.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "journal_lines.h"
#include "journal_record_parse.h"
#include "runner/state/journal.h"

namespace runner {

namespace {

// How every record written here begins.
constexpr std::string_view k_record_start = "{\"event\":";
// How many bytes before a position say which file it is in.
constexpr std::size_t k_position_check = 32;
// How many times a reading starts again when the writer rotated under it.
constexpr int k_listing_attempts = 10;

// A segment's number from its file name ("000012.jsonl"), or 0.
std::uint64_t segment_number(std::string_view name) {
  constexpr std::string_view suffix = ".jsonl";
  if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return 0;
  std::uint64_t number = 0;
  for (char c : name.substr(0, name.size() - suffix.size())) {
    if (c < '0' || c > '9') return 0;
    number = number * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return number;
}

// The bytes of `fd` in [offset - k_position_check, offset).
std::string bytes_before(FileSystem& files, int fd, std::uint64_t offset) {
  std::size_t size = static_cast<std::size_t>(std::min<std::uint64_t>(offset, k_position_check));
  std::string bytes(size, '\0');
  ssize_t n = files.pread(fd, bytes.data(), size, static_cast<off_t>(offset - size));
  bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return bytes;
}

// One segment's lines from `offset` on, parsed into `read`.
Status read_segment(FileSystem& files, int fd, const std::string& path, std::uint64_t number,
                    std::uint64_t offset, const JournalLineFilter& keep,
                    const JournalRecordSink& sink, JournalRead& read) {
  if (files.lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0)
    return Status::error("cannot read " + path + ": " + errno_text());
  std::size_t line_number = 0;
  std::uint64_t whole = offset;
  auto take = [&](std::string_view line) {
    ++line_number;
    if (keep && !line.empty() && !keep(line)) return;
    JournalLine parsed = parse_journal_line(line);
    if (!parsed.skipped.empty()) {
      std::string where = offset == 0 ? fmt::format("line {}", line_number)
                                      : fmt::format("line {} after byte {}", line_number, offset);
      read.skipped.push_back(fmt::format("{} {}: {}", path, where, parsed.skipped));
    }
    if (!parsed.record) return;
    ++read.record_count;
    if (sink) {
      sink(std::move(*parsed.record), parsed.text);
    } else {
      read.records.push_back(std::move(*parsed.record));
    }
  };
  auto on_line = [&](std::string_view line) {
    whole += line.size() + 1;
    take(line);
  };
  Result<std::string> tail = for_each_line(files, fd, path, on_line);
  if (!tail) return tail.status();
  // A complete record whose newline was not written yet is still whole.
  std::size_t records = read.record_count;
  std::size_t skipped = read.skipped.size();
  take(*tail);
  read.unterminated_tail = read.record_count > records;
  read.tail_skipped = read.skipped.size() > skipped;
  read.end = {number, whole, bytes_before(files, fd, whole)};
  return Status::ok_status();
}

}  // namespace

std::string sealed_segments_dir(const std::string& state_dir) { return state_dir + "/journal"; }

std::string sealed_segment_path(const std::string& state_dir, std::uint64_t number) {
  return fmt::format("{}/{:06}.jsonl", sealed_segments_dir(state_dir), number);
}

Result<std::vector<std::uint64_t>> list_sealed_segments(const std::string& state_dir) {
  std::vector<std::uint64_t> numbers;
  DIR* dir = ::opendir(sealed_segments_dir(state_dir).c_str());
  if (!dir) {
    if (errno == ENOENT) return numbers;
    return Status::error("cannot read " + sealed_segments_dir(state_dir) + ": " + errno_text());
  }
  while (dirent* entry = ::readdir(dir))
    if (std::uint64_t number = segment_number(entry->d_name)) numbers.push_back(number);
  ::closedir(dir);
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

Result<std::optional<JournalRead>> read_journal_from(
    const std::string& state_dir, const JournalPosition& from, const JournalLineFilter& keep,
    const SegmentFilter& wanted, std::size_t segments_at_most, const JournalRecordSink& sink) {
  FileSystem& files = real_file_system();
  std::string live_path = journal_path(state_dir);
  // The live file is opened between two listings that agree: a rotation in
  // between would leave a sealed segment unread.
  std::vector<std::uint64_t> sealed;
  FileDescriptor live;
  for (int attempt = 0;; ++attempt) {
    Result<std::vector<std::uint64_t>> listed = list_sealed_segments(state_dir);
    if (!listed) return listed.status();
    sealed = std::move(*listed);
    live = files.open(live_path, O_RDONLY | O_CLOEXEC);
    if (!live.valid() && errno != ENOENT)
      return Status::error("cannot open the journal " + live_path + ": " + errno_text());
    Result<std::vector<std::uint64_t>> again = list_sealed_segments(state_dir);
    if (!again) return again.status();
    if (sealed == *again || attempt == k_listing_attempts) break;
  }
  std::uint64_t live_number = sealed.empty() ? 1 : sealed.back() + 1;
  std::optional<JournalRead> elsewhere;  // `from` is not a position of this journal
  if (from.segment > live_number) return elsewhere;
  if (from.offset > 0 && from.segment < live_number &&
      std::find(sealed.begin(), sealed.end(), from.segment) == sealed.end())
    return elsewhere;

  JournalRead read;
  read.end = from;
  // Whether `from` is a position in it (then it is read), or why it
  // could not be read.
  auto read_one = [&](std::uint64_t number, int fd, const std::string& path) -> Result<bool> {
    std::uint64_t offset = number == from.segment ? from.offset : 0;
    if (offset > 0 && bytes_before(files, fd, offset) != from.before) return false;
    Status segment_read = read_segment(files, fd, path, number, offset, keep, sink, read);
    if (!segment_read) return segment_read;
    return true;
  };
  for (std::uint64_t number : sealed) {
    if (number < from.segment) continue;
    if (wanted) {
      std::optional<SegmentIndex> index = read_segment_index(state_dir, number);
      if (index && !wanted(*index)) {
        read.end = {number + 1, 0, ""};
        continue;
      }
    }
    std::string path = sealed_segment_path(state_dir, number);
    FileDescriptor fd = files.open(path, O_RDONLY | O_CLOEXEC);
    if (!fd.valid())
      return Status::error("cannot open the journal segment " + path + ": " + errno_text());
    Result<bool> here = read_one(number, fd.get(), path);
    if (!here) return here.status();
    if (!*here) return elsewhere;
    // Read to its end: the next reading begins with the next segment.
    read.end = {number + 1, 0, ""};
    if (--segments_at_most == 0) {
      read.whole = false;
      return std::optional<JournalRead>(std::move(read));
    }
  }
  if (live.valid()) {
    Result<bool> here = read_one(live_number, live.get(), live_path);
    if (!here) return here.status();
    if (!*here) return elsewhere;
  } else if (from.segment == live_number && from.offset > 0) {
    return elsewhere;
  }
  return std::optional<JournalRead>(std::move(read));
}

std::optional<JobId> journal_line_job(std::string_view line) {
  int depth = 0;
  std::size_t i = 0;
  const std::size_t n = line.size();
  auto skip_blanks = [&] {
    while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
  };
  while (i < n) {
    char c = line[i];
    if (c == '"') {
      std::size_t start = ++i;
      while (i < n && line[i] != '"') i += line[i] == '\\' ? 2 : 1;
      if (i >= n) return std::nullopt;
      bool is_job = depth == 1 && line.substr(start, i - start) == "job";
      ++i;
      if (!is_job) continue;
      skip_blanks();
      if (i >= n || line[i] != ':') continue;
      ++i;
      skip_blanks();
      JobId value = 0;
      std::size_t digits = 0;
      for (; i < n && line[i] >= '0' && line[i] <= '9' && digits < 19; ++i, ++digits) {
        value = value * 10 + static_cast<JobId>(line[i] - '0');
      }
      if (digits > 0) return value;
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if (c == '}' || c == ']') --depth;
    ++i;
  }
  return std::nullopt;
}

bool SegmentIndex::mentions(JobId id) const {
  auto after = std::upper_bound(jobs.begin(), jobs.end(), std::pair<JobId, JobId>(id, ~JobId(0)));
  return after != jobs.begin() && std::prev(after)->second >= id;
}

namespace {

std::string segment_index_path(const std::string& state_dir, std::uint64_t number) {
  return fmt::format("{}/{:06}.index", sealed_segments_dir(state_dir), number);
}

}  // namespace

Status write_segment_index(const std::string& state_dir, std::uint64_t number, bool runs,
                           std::vector<JobId> jobs) {
  std::sort(jobs.begin(), jobs.end());
  nlohmann::json ranges = nlohmann::json::array();
  for (std::size_t i = 0; i < jobs.size();) {
    std::size_t last = i;
    while (last + 1 < jobs.size() && jobs[last + 1] <= jobs[last] + 1) ++last;
    ranges.push_back({jobs[i], jobs[last]});
    i = last + 1;
  }
  std::string text = nlohmann::json{{"runs", runs}, {"jobs", std::move(ranges)}}.dump() + "\n";
  return replace_file(real_file_system(), segment_index_path(state_dir, number), text);
}

std::optional<SegmentIndex> read_segment_index(const std::string& state_dir, std::uint64_t number) {
  std::optional<std::string> text =
      read_whole_file(real_file_system(), segment_index_path(state_dir, number));
  if (!text) return std::nullopt;
  nlohmann::json json = nlohmann::json::parse(*text, nullptr, false);
  try {
    SegmentIndex index;
    index.runs = json.at("runs").get<bool>();
    for (const nlohmann::json& range : json.at("jobs"))
      index.jobs.emplace_back(range.at(0).get<JobId>(), range.at(1).get<JobId>());
    return index;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

JournalLine parse_journal_line(std::string_view line) {
  if (line.empty()) return {};
  nlohmann::json record = parse_journal_record(line);
  if (record.is_object()) return {std::move(record), line, {}};
  // Older versions glued the next record to one cut short.
  std::size_t glued = line.rfind(k_record_start);
  if (glued != 0 && glued != std::string_view::npos) {
    record = parse_journal_record(line.substr(glued));
    if (record.is_object()) {
      return {std::move(record), line.substr(glued),
              "a record cut short when it was written, with the next one glued to it; skipped "
              "the cut one"};
    }
  }
  return {std::nullopt, {}, "not a whole record (cut short when it was written); skipped"};
}

Result<std::vector<nlohmann::json>> read_journal(const std::string& path,
                                                 std::vector<std::string>* skipped) {
  std::vector<nlohmann::json> records;
  FileSystem& files = real_file_system();
  FileDescriptor fd = files.open(path, O_RDONLY | O_CLOEXEC);
  if (!fd.valid()) {
    if (errno == ENOENT) return records;
    return Status::error("cannot open the journal " + path + ": " + errno_text());
  }
  JournalRead read;
  Status segment_read = read_segment(files, fd.get(), path, 1, 0, {}, {}, read);
  if (!segment_read) return segment_read;
  if (skipped) skipped->insert(skipped->end(), read.skipped.begin(), read.skipped.end());
  return std::move(read.records);
}

}  // namespace runner
