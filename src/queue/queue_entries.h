// Private to the queue area: the entries a queue's text holds, read the way
// parse_queue_document reads them, and whether two readings are the same.
// The queue's editors parse what they wrote with these to check it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "runner/config/queue_entry.h"
#include "runner/core/result.h"

namespace runner {

// The first YAML document of the text (null when there is none); a `[]`
// that entries follow is read as no content. A failure naming `path`, line
// and column (Status::at) when the text is not YAML or a second document has
// content.
Result<YAML::Node> load_queue_root(const std::string& text, const std::string& path);

// The entries of the list `root`; none for a null root. A failure naming
// `path` when it is not a list or an entry is invalid.
Result<std::vector<QueueEntry>> parse_entries(const YAML::Node& root, const std::string& path);

// The entries `text` holds on its own, or nullopt when it does not parse.
std::optional<std::vector<QueueEntry>> entries_of(const std::string& text);

// Whether two entries read the same: text, keys, values and list forms
// (not where they are in their files).
bool same_entry(const QueueEntry& a, const QueueEntry& b);
bool same_entries(const std::vector<QueueEntry>& a, const std::vector<QueueEntry>& b);

}  // namespace runner
