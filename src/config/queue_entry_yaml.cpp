// queue.yaml entries written back as YAML text that parses to the same
// entry: keys in order, scalars quoted only as much as they need, lists in
// flow style, multi-line strings in literal block style. Pure logic.
#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "runner/config/queue_entry.h"

namespace runner {

namespace {

// The one key whose value is YAML already (a flow mapping).
constexpr std::string_view k_metrics = "metrics";

// One scalar in YAML, quoted only as much as it needs (YAML::Emitter decides).
std::string emit_scalar(const std::string& value) {
  YAML::Emitter out;
  out << value;
  return std::string(out.c_str(), out.size());
}

// A key in YAML; a key named `<<` is quoted, as a plain `<<` is a merge key.
std::string emit_key(const std::string& name) { return name == "<<" ? "'<<'" : emit_scalar(name); }

bool whitespace_only(std::string_view line) {
  return !line.empty() && line.find_first_not_of(" \t") == std::string_view::npos;
}

// A multi-line string that literal block style (`|` or `|-`) writes back
// exactly; anything unusual is left to the emitter's double quotes.
bool fits_literal_block(const std::string& value) {
  if (value.find('\n') == std::string::npos) return false;
  if (value.size() >= 2 && value.compare(value.size() - 2, 2, "\n\n") == 0) return false;
  for (unsigned char c : value)
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
  bool seen_text = false;
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t stop = value.find('\n', start);
    if (stop == std::string::npos) stop = value.size();
    std::string_view line(value.data() + start, stop - start);
    if (whitespace_only(line)) return false;
    if (!line.empty() && !seen_text) {
      if (line.front() == ' ' || line.front() == '\t') return false;
      seen_text = true;
    }
    start = stop + 1;
  }
  return seen_text;
}

// `value` as it follows "key:" or "- " (without the separating space), its
// continuation lines indented by `body_indent`; no final newline.
std::string scalar_text(const std::string& value, int body_indent) {
  if (!fits_literal_block(value)) return emit_scalar(value);
  bool clip = value.back() == '\n';
  std::string out = clip ? "|" : "|-";
  std::string pad(body_indent, ' ');
  std::size_t start = 0;
  std::size_t size = clip ? value.size() - 1 : value.size();
  while (start <= size) {
    std::size_t stop = value.find('\n', start);
    if (stop == std::string::npos || stop > size) stop = size;
    out += '\n';
    if (stop > start) out += pad + value.substr(start, stop - start);
    start = stop + 1;
  }
  return out;
}

std::string flow_list(const std::vector<std::string>& values) {
  YAML::Emitter out;
  out << YAML::Flow << YAML::BeginSeq;
  for (const auto& value : values) out << value;
  out << YAML::EndSeq;
  return std::string(out.c_str(), out.size());
}

}  // namespace

std::string entry_to_yaml(const QueueEntry& entry, int indent) {
  std::string pad(indent, ' ');
  if (entry.plain && entry.keys.size() == 1 && entry.keys[0].values.size() == 1)
    return pad + "- " + scalar_text(entry.keys[0].values[0], indent + 2) + "\n";
  std::string out;
  for (std::size_t i = 0; i < entry.keys.size(); ++i) {
    const EntryKey& key = entry.keys[i];
    out += pad + (i == 0 ? "- " : "  ") + emit_key(key.name) + ":";
    bool list = key.was_list || key.values.size() != 1;
    if (key.name == k_metrics && !list) {
      out += " " + key.values[0] + "\n";  // already YAML: a flow mapping
      continue;
    }
    if (!list) {
      out += " " + scalar_text(key.values[0], indent + 4) + "\n";
      continue;
    }
    bool multi_line = false;
    for (const auto& value : key.values) multi_line = multi_line || fits_literal_block(value);
    if (!multi_line) {
      out += " " + flow_list(key.values) + "\n";
      continue;
    }
    out += "\n";
    for (const auto& value : key.values)
      out += pad + "    - " + scalar_text(value, indent + 6) + "\n";
  }
  return out;
}

}  // namespace runner
