// hosts.yaml: parsing host addresses and expanding entries into the slots
// and hosts of a Fleet (SPEC section 1). Pure except load_hosts, which reads
// one file.
#include "runner/config/hosts.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "merge_keys.h"
#include "runner/config/template.h"
#include "runner/config/yaml_documents.h"

namespace runner {

namespace {

constexpr std::string_view k_hostname_key = "hostname";
constexpr std::string_view k_slots_key = "slots";
constexpr std::string_view k_gpu_free_key = "gpu_free";
constexpr std::string_view k_gpu_monitor_key = "gpu_monitor";
constexpr std::array<std::string_view, 4> k_reserved_keys = {k_hostname_key, k_slots_key,
                                                             k_gpu_free_key, k_gpu_monitor_key};
constexpr int k_max_slot_count = 100000;

// A 1-based position in the hosts file.
struct Position {
  int line = 0;
  int column = 0;
};

Position position_of(const YAML::Mark& mark) {
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

// yaml-cpp places an implicit null (`-` followed by nothing) at the next
// token. Walk back over blanks to the `-` that introduced it, if there is one.
Position position_of_empty_item(std::string_view text, const YAML::Mark& mark) {
  if (mark.is_null() || mark.pos < 0) return position_of(mark);
  std::size_t pos = std::min(static_cast<std::size_t>(mark.pos), text.size());
  while (pos > 0 && (text[pos - 1] == ' ' || text[pos - 1] == '\t' || text[pos - 1] == '\n' ||
                     text[pos - 1] == '\r'))
    --pos;
  if (pos == 0 || text[pos - 1] != '-') return position_of(mark);
  std::size_t dash = pos - 1;
  std::size_t line_start = text.rfind('\n', dash);
  line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + dash, '\n'));
  return {line, static_cast<int>(dash - line_start) + 1};
}

// `localhost` in any case, `127.0.0.1` or `::1`, as Pegasus' is_localhost.
bool is_loopback_name(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "localhost" || lower == "127.0.0.1" || lower == "::1";
}

bool parse_port(std::string_view text, int& port) {
  if (text.empty() || text.size() > 5) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  std::from_chars(text.data(), text.data() + text.size(), port);
  return port >= 1 && port <= 65535;
}

// One value of an entry key with where it was written.
struct Value {
  std::string text;
  Position position;
};

// A key of a hosts.yaml mapping with all its values.
struct EntryKeyValues {
  std::string name;
  std::vector<Value> values;
};

// Accumulates slots into a Fleet, grouping them by hostname.
class FleetBuilder {
 public:
  explicit FleetBuilder(std::string path) : m_path(std::move(path)) {}

  Status add_slot(const std::string& hostname, Position where, int entry_line, Params params,
                  int element, const std::optional<GpuFreeRule>& gpu_free,
                  std::optional<bool> gpu_monitor) {
    Result<int> found = host_for(hostname, where, entry_line);
    if (!found) return found.status();
    int host_id = *found;
    Host& host = m_fleet.hosts[host_id];
    Slot slot;
    slot.host = host_id;
    slot.index = static_cast<int>(host.slots.size());
    slot.params = std::move(params);
    slot.line = entry_line;
    slot.element = element;
    slot.gpu_free = gpu_free;
    slot.gpu_monitor = gpu_monitor.value_or(true);
    slot.gpu_monitor_asked = gpu_monitor.value_or(false);
    host.slots.push_back(static_cast<int>(m_fleet.slots.size()));
    m_fleet.slots.push_back(std::move(slot));
    return Status();
  }

  Fleet finish() {
    assign_labels();
    return std::move(m_fleet);
  }

 private:
  Result<int> host_for(const std::string& hostname, Position where, int entry_line) {
    auto found = m_host_ids.find(hostname);
    if (found != m_host_ids.end()) return found->second;
    Host host;
    host.name = hostname;
    Result<HostAddress> address = parse_host_address(hostname);
    if (!address) return Status::at(m_path, where.line, where.column, address.status().message());
    host.address = std::move(*address);
    host.line = entry_line;
    int id = static_cast<int>(m_fleet.hosts.size());
    m_fleet.hosts.push_back(std::move(host));
    m_host_ids.emplace(hostname, id);
    return id;
  }

  // "node01 gpu=0"; the slot index is appended ("node01 #2") only when the
  // hostname and parameters alone do not tell a slot apart from another.
  void assign_labels() {
    std::unordered_map<std::string, int> uses;
    for (Slot& slot : m_fleet.slots) {
      slot.label = m_fleet.hosts[slot.host].name;
      for (const auto& [key, value] : slot.params) slot.label += fmt::format(" {}={}", key, value);
      ++uses[slot.label];
    }
    for (Slot& slot : m_fleet.slots)
      if (uses[slot.label] > 1) slot.label += fmt::format(" #{}", slot.index);
  }

  std::string m_path;
  Fleet m_fleet;
  std::unordered_map<std::string, int> m_host_ids;
};

// Parses one item of the hosts sequence into slots of the builder.
class EntryParser {
 public:
  EntryParser(std::string_view text, const std::string& path, FleetBuilder& builder)
      : m_text(text), m_path(path), m_builder(builder) {}

  Status parse(const YAML::Node& item) {
    Position where = position_of(item.Mark());
    switch (item.Type()) {
      case YAML::NodeType::Scalar:
        return add_slots(Value{item.Scalar(), where}, where.line, {}, 1);
      case YAML::NodeType::Map:
        return parse_mapping(item);
      case YAML::NodeType::Sequence:
        return failure(where,
                       "a host entry is a hostname or a mapping with `hostname`, not a list; "
                       "write `- hostname: [a, b]` for several hosts");
      default:
        return failure(position_of_empty_item(m_text, item.Mark()),
                       "empty host entry; write a hostname after `-` or remove the line");
    }
  }

 private:
  Status failure(Position where, const std::string& message) const {
    return Status::at(m_path, where.line, where.column, message);
  }

  Status parse_mapping(const YAML::Node& item) {
    Position entry_where = position_of(item.Mark());
    std::vector<Value> hostnames;
    bool has_hostname = false;
    int slot_count = 1;
    std::vector<EntryKeyValues> keys;
    std::vector<std::string> seen;

    Result<std::vector<MappingPair>> pairs = merged_pairs(item, m_path);
    if (!pairs) return pairs.status();
    for (const MappingPair& pair : *pairs) {
      const YAML::Node& key = pair.key;
      const YAML::Node& value = pair.value;
      Position key_where = position_of(key.Mark());
      if (!key.IsScalar())
        return failure(key_where, "a host parameter name must be a plain word, e.g. `gpu:`");
      std::string name = key.Scalar();
      if (std::find(seen.begin(), seen.end(), name) != seen.end())
        return failure(key_where, fmt::format("`{}` appears twice in this entry; keep one", name));
      seen.push_back(name);

      if (name == k_slots_key) {
        Result<int> count = parse_slot_count(value, key_where);
        if (!count) return count.status();
        slot_count = *count;
        continue;
      }
      if (name == k_gpu_free_key) {
        if (!value.IsScalar())
          return failure(key_where, "`gpu_free` is one condition, like `memory < 1GiB`");
        Result<GpuFreeRule> rule = parse_gpu_free(value.Scalar());
        if (!rule) return failure(position_of(value.Mark()), rule.status().message());
        m_gpu_free = std::move(*rule);
        continue;
      }
      if (name == k_gpu_monitor_key) {
        Result<bool> on = parse_switch(value, "gpu_monitor");
        if (!on) return on.status();
        m_gpu_monitor = *on;
        continue;
      }
      Result<std::vector<Value>> values = scalar_values(name, value, key_where);
      if (!values) return values.status();
      if (name == k_hostname_key) {
        hostnames = std::move(*values);
        has_hostname = true;
      } else {
        keys.push_back(EntryKeyValues{std::move(name), std::move(*values)});
      }
    }
    if (!has_hostname)
      return failure(entry_where, "host entry has no `hostname` key; add `hostname: <host>`");

    if (Status counted =
            count_slots(entry_where, hostnames.size() * static_cast<std::size_t>(slot_count), keys);
        !counted)
      return counted;
    for (const Value& hostname : hostnames)
      if (Status expanded = expand(hostname, entry_where.line, keys, slot_count); !expanded)
        return expanded;
    m_gpu_free.reset();
    m_gpu_monitor.reset();
    return Status();
  }

  // Adds an entry's slots, `per_element` times the product of its lists'
  // lengths, to the fleet's count before they are made: a few lines (with
  // aliases, one list named many times) can write a product of billions.
  Status count_slots(Position entry_where, std::size_t per_element,
                     const std::vector<EntryKeyValues>& keys) {
    std::size_t count = per_element;
    for (const EntryKeyValues& key : keys)
      count = std::min(count * key.values.size(), std::size_t{k_max_slot_count} + 1);
    m_slot_count += count;
    if (m_slot_count > k_max_slot_count)
      return failure(
          entry_where,
          fmt::format("this entry brings the fleet to more than {} slots (its hostnames and "
                      "`slots:` times every combination of its lists); list fewer values",
                      k_max_slot_count));
    return Status();
  }

  // Every element of the product of `keys` (last key fastest) for one
  // hostname value.
  Status expand(const Value& hostname, int entry_line, const std::vector<EntryKeyValues>& keys,
                int slot_count) {
    std::vector<std::size_t> digits(keys.size(), 0);
    do {
      Params params;
      params.reserve(keys.size());
      for (std::size_t k = 0; k < keys.size(); ++k)
        params.emplace_back(keys[k].name, keys[k].values[digits[k]].text);
      if (Status added = add_slots(hostname, entry_line, params, slot_count); !added) return added;
    } while (advance(digits, keys));
    return Status();
  }

  // Steps the product counter, last key fastest; false after the last element.
  static bool advance(std::vector<std::size_t>& digits, const std::vector<EntryKeyValues>& keys) {
    for (std::size_t k = keys.size(); k-- > 0;) {
      if (++digits[k] < keys[k].values.size()) return true;
      digits[k] = 0;
    }
    return false;
  }

  Status add_slots(const Value& hostname, int entry_line, const Params& params, int slot_count) {
    std::string undefined;  // the last name the entry does not define
    Result<std::string> rendered = render_template(hostname.text, [&](std::string_view name) {
      std::optional<std::string> value = find_param(params, name);
      if (!value) undefined = name;
      return value;
    });
    if (!rendered && rendered.status().kind() == ErrorKind::undefined)
      return failure(
          hostname.position,
          fmt::format("hostname `{}` uses `{}`, which this entry does not define; add `{}:` to "
                      "the entry",
                      hostname.text, undefined, undefined));
    if (!rendered)
      return failure(hostname.position,
                     fmt::format("hostname `{}`: {}", hostname.text, rendered.status().message()));
    int element = m_elements++;
    for (int i = 0; i < slot_count; ++i)
      if (Status added = m_builder.add_slot(*rendered, hostname.position, entry_line, params,
                                            element, m_gpu_free, m_gpu_monitor);
          !added)
        return added;
    return Status();
  }

  // `on` or `off` (also true/false, yes/no), as a switch key is written.
  Result<bool> parse_switch(const YAML::Node& value, std::string_view key) const {
    std::string text = value.IsScalar() ? value.Scalar() : "";
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (text == "on" || text == "true" || text == "yes") return true;
    if (text == "off" || text == "false" || text == "no") return false;
    return failure(position_of(value.Mark()), fmt::format("`{}` is `on` or `off`", key));
  }

  // `slots: 4`, or `slots: [4]` as Pegasus' job-slots files write it.
  Result<int> parse_slot_count(const YAML::Node& written, Position key_where) const {
    const std::string hint = "`slots` must be a positive integer, e.g. `slots: 4`";
    if (written.IsSequence() && written.size() > 1)
      return failure(position_of(written.Mark()), hint + ": one number, not a list");
    const YAML::Node value = written.IsSequence() && written.size() == 1 ? written[0] : written;
    if (!value.IsScalar())
      return failure(value.IsNull() ? key_where : position_of(value.Mark()), hint);
    const std::string& text = value.Scalar();
    int count = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (error != std::errc() || end != text.data() + text.size() || count < 1 ||
        count > k_max_slot_count)
      return failure(position_of(value.Mark()),
                     fmt::format("{} up to {} (got `{}`)", hint, k_max_slot_count, text));
    return count;
  }

  Result<std::vector<Value>> scalar_values(const std::string& name, const YAML::Node& value,
                                           Position key_where) const {
    if (value.IsScalar())
      return std::vector<Value>{Value{value.Scalar(), position_of(value.Mark())}};
    if (value.IsNull())
      return failure(key_where,
                     fmt::format("`{}` has no value; give a value or remove the key", name));
    if (value.IsMap())
      return failure(position_of(value.Mark()),
                     fmt::format("`{}` is a mapping; use a value or a list of values", name));
    if (value.size() == 0)
      return failure(
          position_of(value.Mark()),
          fmt::format("`{}` is an empty list; give at least one value or remove the key", name));
    std::vector<Value> values;
    for (const YAML::Node& element : value) {
      if (!element.IsScalar())
        return failure(
            element.IsNull() ? position_of(value.Mark()) : position_of(element.Mark()),
            fmt::format("every element of `{}` must be a plain value (not a list, a mapping "
                        "or empty)",
                        name));
      values.push_back(Value{element.Scalar(), position_of(element.Mark())});
    }
    return values;
  }

  std::string_view m_text;
  const std::string& m_path;
  FleetBuilder& m_builder;
  int m_elements = 0;  // product elements expanded so far
  std::size_t m_slot_count = 0;           // slots of the mapping entries so far
  std::optional<GpuFreeRule> m_gpu_free;  // the entry's, while it is expanded
  std::optional<bool> m_gpu_monitor;      // the entry's `gpu_monitor:`, if it has one
};

}  // namespace

Result<HostAddress> parse_host_address(std::string_view text) {
  auto malformed = [&](std::string_view why) {
    return Status::error(fmt::format("bad host address `{}`: {}", text, why));
  };
  HostAddress address;
  if (is_loopback_name(text)) {
    address.host = std::string(text);
    address.local = true;
    return address;
  }
  for (char c : text)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return malformed("it contains whitespace");

  std::string_view rest = text;
  if (std::size_t at = rest.rfind('@'); at != std::string_view::npos) {
    address.user = std::string(rest.substr(0, at));
    if (address.user.empty()) return malformed("the user before `@` is empty");
    rest = rest.substr(at + 1);
  }

  std::string_view port;
  bool has_port = false;
  if (!rest.empty() && rest.front() == '[') {
    std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return malformed("`[` without a matching `]`");
    std::string_view after = rest.substr(close + 1);
    rest = rest.substr(1, close - 1);
    if (!after.empty()) {
      if (after.front() != ':') return malformed("expected `:port` after `]`");
      port = after.substr(1);
      has_port = true;
    }
  } else if (std::count(rest.begin(), rest.end(), ':') == 1) {
    std::size_t colon = rest.find(':');
    port = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    has_port = true;
  }

  if (rest.empty()) return malformed("the host name is empty");
  address.host = std::string(rest);
  if (has_port && !parse_port(port, address.port))
    return malformed(fmt::format("port `{}` is not a number from 1 to 65535", port));
  return address;
}

std::span<const std::string_view> reserved_host_keys() { return k_reserved_keys; }

Result<Fleet> parse_hosts(std::string_view text, const std::string& path) {
  Result<std::vector<YAML::Node>> documents = load_yaml_documents(std::string(text), path);
  if (!documents) return documents.status();
  YAML::Node document = documents->empty() ? YAML::Node() : documents->front();
  const std::string example = "e.g. `- node01` or `- hostname: node02`";
  if (!document.IsDefined() || document.IsNull())
    return Status::at(path, 0, "no hosts; list at least one host, " + example);
  if (!document.IsSequence()) {
    Position where = position_of(document.Mark());
    return Status::at(path, where.line, where.column,
                      "the hosts file must be a YAML list of hosts, " + example);
  }
  if (document.size() == 0) {
    Position where = position_of(document.Mark());
    return Status::at(path, where.line, where.column,
                      "no hosts; list at least one host, " + example);
  }

  FleetBuilder builder(path);
  EntryParser parser(text, path, builder);
  for (const YAML::Node& item : document)
    if (Status parsed = parser.parse(item); !parsed) return parsed;
  return builder.finish();
}

std::vector<std::string> repeated_slot_warnings(const Fleet& fleet, const std::string& path) {
  std::vector<std::string> warnings;
  // "node01 gpu=0" -> the first slot so named.
  std::unordered_map<std::string, const Slot*> first_of;
  for (const Slot& slot : fleet.slots) {
    if (slot.params.empty()) continue;
    std::string name = fleet.hosts[slot.host].name;
    for (const auto& [key, value] : slot.params) name += fmt::format(" {}={}", key, value);
    auto [first, added] = first_of.emplace(name, &slot);
    if (added || (slot.element >= 0 && first->second->element == slot.element)) continue;
    warnings.push_back(fmt::format(
        "{}:{}: {} is also at line {}: two jobs will run on it at once; if that is not meant, "
        "remove one of the two (for several jobs on one host, give it `slots: N` instead)",
        path, slot.line, name, first->second->line));
  }
  return warnings;
}

Result<Fleet> load_hosts(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored))
    return Status::error(
        fmt::format("hosts file not found: {} (create it, or pass --hosts-file)", path));
  if (std::filesystem::is_directory(path, ignored))
    return Status::error(
        fmt::format("hosts file {} is a directory; pass the YAML file itself", path));
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open())
    return Status::error(fmt::format("cannot read hosts file {}; check its permissions", path));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_hosts(text.str(), path);
}

}  // namespace runner
