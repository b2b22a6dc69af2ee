// The entries of a queue's text as parse_queue_document reads them, and
// their comparison. Pure.
#include "queue_entries.h"

#include <exception>

#include "empty_list.h"
#include "runner/config/config_error.h"
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

YAML::Node load_queue_root(const std::string& text, const std::string& path) {
  std::optional<std::string> appended_to_empty = empty_list::blanked(text);
  std::vector<YAML::Node> documents =
      load_yaml_documents(appended_to_empty ? *appended_to_empty : text, path);
  for (std::size_t i = 1; i < documents.size(); ++i)
    if (!documents[i].IsNull()) {
      const YAML::Mark& mark = documents[i].Mark();
      throw ConfigError(path, mark.line + 1, mark.column + 1,
                        "a second YAML document starts here; the queue must be a single list");
    }
  return documents.empty() ? YAML::Node() : documents.front();
}

std::vector<QueueEntry> parse_entries(const YAML::Node& root, const std::string& path) {
  std::vector<QueueEntry> entries;
  if (!root || root.IsNull()) return entries;
  if (!root.IsSequence()) {
    const YAML::Mark& mark = root.Mark();
    throw ConfigError(path, mark.line + 1, mark.column + 1,
                      "the queue must be a YAML list, one `- command` or `- command: ...` item "
                      "per entry");
  }
  entries.reserve(root.size());
  for (const auto& item : root) entries.push_back(parse_queue_entry(item, path));
  return entries;
}

std::optional<std::vector<QueueEntry>> entries_of(const std::string& text) {
  try {
    return parse_entries(load_queue_root(text, ""), "");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool same_entries(const std::vector<QueueEntry>& a, const std::vector<QueueEntry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same_entry(a[i], b[i])) return false;
  return true;
}

}  // namespace runner
