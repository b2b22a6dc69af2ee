// The entries of a queue's text as parse_queue_document reads them, and
// their comparison. Pure.
#include "queue_entries.h"

#include "empty_list.h"
#include "runner/config/yaml_documents.h"

namespace runner {

bool same_entry(const QueueEntry& a, const QueueEntry& b) {
  if (a.plain != b.plain || a.keys.size() != b.keys.size()) return false;
  for (std::size_t i = 0; i < a.keys.size(); ++i) {
    const EntryKey& x = a.keys[i];
    const EntryKey& y = b.keys[i];
    if (x.name != y.name || x.was_list != y.was_list || x.values != y.values) return false;
  }
  return true;
}

Result<YAML::Node> load_queue_root(const std::string& text, const std::string& path) {
  std::optional<std::string> appended_to_empty = empty_list::blanked(text);
  Result<std::vector<YAML::Node>> documents =
      load_yaml_documents(appended_to_empty ? *appended_to_empty : text, path);
  if (!documents) return documents.status();
  for (std::size_t i = 1; i < documents->size(); ++i)
    if (!(*documents)[i].IsNull()) {
      const YAML::Mark& mark = (*documents)[i].Mark();
      return Status::at(path, mark.line + 1, mark.column + 1,
                        "a second YAML document starts here; the queue must be a single list");
    }
  return documents->empty() ? YAML::Node() : documents->front();
}

Result<std::vector<QueueEntry>> parse_entries(const YAML::Node& root, const std::string& path) {
  std::vector<QueueEntry> entries;
  if (!root || root.IsNull()) return entries;
  if (!root.IsSequence()) {
    const YAML::Mark& mark = root.Mark();
    return Status::at(path, mark.line + 1, mark.column + 1,
                      "the queue must be a YAML list, one `- command` or `- command: ...` item "
                      "per entry");
  }
  entries.reserve(root.size());
  for (const auto& item : root) {
    Result<QueueEntry> entry = parse_queue_entry(item, path);
    if (!entry) return entry.status();
    entries.push_back(std::move(*entry));
  }
  return entries;
}

std::optional<std::vector<QueueEntry>> entries_of(const std::string& text) {
  Result<YAML::Node> root = load_queue_root(text, "");
  if (!root) return std::nullopt;
  Result<std::vector<QueueEntry>> entries = parse_entries(*root, "");
  if (!entries) return std::nullopt;
  return std::move(*entries);
}

bool same_entries(const std::vector<QueueEntry>& a, const std::vector<QueueEntry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_entry(a[i], b[i])) return false;
  return true;
}

}  // namespace runner
