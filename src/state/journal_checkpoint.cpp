// The journal's checkpoint file: a header line (position, summary, skipped
// lines), then the kept records, one per line as in the journal.
#include "runner/state/journal_checkpoint.h"

#include <fcntl.h>

#include "journal_lines.h"
#include "runner/core/file_system.h"
#include "runner/state/journal_text.h"

namespace runner {

namespace {

// Says which layout the file has; another one is not read.
constexpr int k_version = 1;

std::optional<JournalCheckpoint> header_of(std::string_view line) {
  nlohmann::json header = nlohmann::json::parse(line, nullptr, false);
  if (!header.is_object() || header.value("version", 0) != k_version) return std::nullopt;
  try {
    JournalCheckpoint checkpoint;
    checkpoint.position.segment = header.at("segment").get<std::uint64_t>();
    checkpoint.position.offset = header.at("offset").get<std::uint64_t>();
    checkpoint.position.before = journal_text(header.at("before"));
    checkpoint.summary = header.at("summary");
    checkpoint.skipped = header.at("skipped").get<std::vector<std::string>>();
    return checkpoint;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::string journal_checkpoint_path(const std::string& state_dir) {
  return state_dir + "/journal.checkpoint";
}

std::optional<JournalCheckpoint> load_journal_checkpoint(const std::string& state_dir) {
  FileSystem& files = real_file_system();
  std::string path = journal_checkpoint_path(state_dir);
  FileDescriptor fd = files.open(path, O_RDONLY | O_CLOEXEC);
  if (!fd.valid()) return std::nullopt;
  std::optional<JournalCheckpoint> checkpoint;
  bool whole = true;
  Result<std::string> tail = for_each_line(files, fd.get(), path, [&](std::string_view line) {
    if (!whole) return;
    if (!checkpoint) {
      checkpoint = header_of(line);
      whole = checkpoint.has_value();
      return;
    }
    Result<JournalRecord> record = read_record(line);
    whole = record.ok();
    if (whole) checkpoint->records.push_back(std::move(*record));
  });
  // Written whole, every line ended: anything else is not this file.
  if (!tail || !tail->empty() || !whole) return std::nullopt;
  return checkpoint;
}

Status save_journal_checkpoint(const std::string& state_dir, const JournalCheckpoint& checkpoint) {
  nlohmann::json header = {{"version", k_version},
                           {"segment", checkpoint.position.segment},
                           {"offset", checkpoint.position.offset},
                           {"before", nlohmann::json(exact_text(checkpoint.position.before))},
                           {"summary", checkpoint.summary},
                           {"skipped", checkpoint.skipped}};
  std::string text = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  for (const JournalRecord& record : checkpoint.records) text += journal_line(record);

  return replace_file(real_file_system(), journal_checkpoint_path(state_dir), text);
}

}  // namespace runner
