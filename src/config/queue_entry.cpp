// queue.yaml entries: parsing one item, expanding it into jobs in the order
// SPEC section 2 gives, and splitting off its first job as at most k
// entries (queue_entry_yaml.cpp writes entries back). Pure logic.
#include "runner/config/queue_entry.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <set>

#include "merge_keys.h"
#include "runner/config/duration.h"
#include "runner/config/metrics.h"
#include "runner/config/service.h"

namespace runner {

namespace {

constexpr const char* k_command = "command";
constexpr const char* k_slots = "slots";
constexpr const char* k_timeout = "timeout";
constexpr const char* k_retries = "retries";
constexpr const char* k_cancel = "cancel";
constexpr const char* k_allocation = "allocation_policy";
constexpr const char* k_nodes = "nodes";
constexpr const char* k_metrics = "metrics";
constexpr const char* k_outputs = "outputs";
constexpr const char* k_outputs_cleanup = "outputs_cleanup";
constexpr const char* k_every = "every";
constexpr const char* k_push = "push";
constexpr const char* k_push_to = "push_to";
// More slots than any one host could have; keeps the number sane.
constexpr int k_max_slots = 1 << 20;

int line_of(const YAML::Node& node) { return node.Mark().line >= 0 ? node.Mark().line + 1 : 0; }
int column_of(const YAML::Node& node) {
  return node.Mark().column >= 0 ? node.Mark().column + 1 : 0;
}

Status failure_at(const std::string& path, const YAML::Node& node, const std::string& message) {
  return Status::at(path, line_of(node), column_of(node), message);
}

// The value of one `slots` element, or nullopt when it is not a positive integer.
std::optional<int> parse_slots(const std::string& text) {
  int value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end || *begin < '0' || *begin > '9') return std::nullopt;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || value <= 0 || value > k_max_slots) return std::nullopt;
  return value;
}

int slots_value(const std::string& text) {
  // Values were checked by parse_queue_entry; entries built by hand may not be.
  return parse_slots(text).value_or(1);
}

// `at` is where a missing value is reported: the key, since an empty value's
// own position is that of whatever follows it.
Result<std::string> scalar_value(const YAML::Node& node, const YAML::Node& at,
                                 const std::string& path, const std::string& key) {
  if (node.IsNull())
    return failure_at(
        path, at,
        fmt::format("`{}` has no value; write a value, a list like [a, b], or remove the key",
                    key));
  if (node.IsMap())
    return failure_at(
        path, node,
        fmt::format("`{}` is a mapping; a value must be a scalar or a list of scalars", key));
  if (node.IsSequence())
    return failure_at(
        path, node,
        fmt::format("`{}` holds a nested list; a value must be a scalar or a list of scalars",
                    key));
  return node.Scalar();
}

// The value of one `retries` element, or nullopt when it is not a count.
std::optional<int> parse_retries(const std::string& text) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0 ||
      value > 1000)
    return std::nullopt;
  return value;
}

// The first word of an `outputs` value with a `..` name in it (quotes
// aside): a path that leaves the login directory, which the host's tar
// would store without its `..`, as another file's name.
std::optional<std::string> word_leaving_login_directory(std::string_view outputs) {
  std::size_t begin = 0;
  while ((begin = outputs.find_first_not_of(" \t\n", begin)) != std::string_view::npos) {
    std::size_t end = std::min(outputs.find_first_of(" \t\n", begin), outputs.size());
    std::string word(outputs.substr(begin, end - begin));
    std::string path;
    for (char c : word)
      if (c != '"' && c != '\'') path += c;
    if (("/" + path + "/").find("/../") != std::string::npos) return word;
    begin = end;
  }
  return std::nullopt;
}

// Checks one value of a reserved key that has a form of its own.
Status check_reserved_value(const std::string& key, const YAML::Node& node,
                            const std::string& value, const std::string& path) {
  if (key == k_slots && !parse_slots(value))
    return failure_at(
        path, node,
        fmt::format("`slots` must be a positive integer (the number of slots of one host the "
                    "job needs), not `{}`",
                    value));
  if (key == k_timeout && !parse_duration(value))
    return failure_at(
        path, node,
        fmt::format("`timeout` must be a duration like 90s, 45m, 2h or 1h30m, not `{}`", value));
  if (key == k_nodes && !parse_slots(value))
    return failure_at(
        path, node,
        fmt::format("`nodes` must be a positive integer (the number of hosts the job runs on, "
                    "one task each), not `{}`",
                    value));
  if (key == k_retries && !parse_retries(value))
    return failure_at(
        path, node,
        fmt::format("`retries` must be a whole number of reruns (0 to 1000), not `{}`", value));
  if (is_service_key(key))
    if (Status checked = check_service_value(key, value); !checked.ok())
      return failure_at(path, node, checked.message());
  if (key == k_every && value != "host")
    return failure_at(
        path, node,
        fmt::format("`every: host` runs the job once on each host; `{}` is not a value "
                    "`every` takes",
                    value));
  if (key == k_outputs)
    if (std::optional<std::string> word = word_leaving_login_directory(value))
      return failure_at(
          path, node,
          fmt::format("`outputs` names `{}`, which leaves the login directory (`..`): tar "
                      "would bring it back, and outputs_cleanup remove it, under another "
                      "name; name it by its absolute path, or copy it below the login "
                      "directory in the command",
                      *word));
  if (key == k_outputs_cleanup && value != "true" && value != "false")
    return failure_at(path, node,
                      fmt::format("`outputs_cleanup` is true or false, not `{}`", value));
  if (key == k_allocation && !parse_allocation(value))
    return failure_at(
        path, node, fmt::format("`allocation_policy` must be first_fit or buddy, not `{}`", value));
  return Status();
}

// A buddy allocation takes aligned blocks of a power of two slots.
Status check_buddy_slots(const QueueEntry& entry, const std::string& path) {
  const EntryKey* allocation = nullptr;
  const EntryKey* slots = nullptr;
  for (const auto& key : entry.keys) {
    if (key.name == k_allocation) allocation = &key;
    if (key.name == k_slots) slots = &key;
  }
  if (!allocation || !slots) return Status();
  for (const auto& policy : allocation->values)
    for (const auto& value : slots->values) {
      int k = slots_value(value);
      if (allocation_takes(parse_allocation(policy).value_or(Allocation::first_fit), k)) continue;
      return Status::at(path, allocation->line,
                        fmt::format("`allocation_policy: buddy` takes a power of two slots (1, 2, "
                                    "4, 8, ...), and `slots` is {} (line {}); use first_fit or "
                                    "change `slots`",
                                    k, slots->line));
    }
  return Status();
}

constexpr const char* k_metrics_example = "metrics: {throughput: 'throughput: ([0-9.]+)'}";

// `metrics:` is the one key whose value is a mapping (name: regex); the
// entry holds it as one value, its YAML flow text, so that it expands,
// compares and is written back like any scalar key.
Result<std::string> metrics_value(const YAML::Node& value, const YAML::Node& at,
                                  const std::string& path) {
  if (!value.IsMap() || value.size() == 0)
    return failure_at(
        path, value.IsNull() ? at : value,
        fmt::format("`metrics` must be a mapping of metric names to regular expressions "
                    "with one capture group, like `{}`",
                    k_metrics_example));
  Params metrics;
  for (const auto& pair : value) {
    if (!pair.first.IsScalar() || !pair.second.IsScalar())
      return failure_at(path, pair.first,
                        fmt::format("each metric is a name and one regular expression, like `{}`",
                                    k_metrics_example));
    const std::string& name = pair.first.Scalar();
    const std::string& pattern = pair.second.Scalar();
    if (Status checked = check_metric_pattern(pattern); !checked.ok())
      return failure_at(
          path, pair.second,
          fmt::format("the regular expression of metric `{}`, `{}`, {}; write one that "
                      "compiles (Perl's syntax, as PCRE2 reads it) with a capture group "
                      "around the value, like 'throughput: ([0-9.]+)'",
                      name, pattern, checked.message()));
    metrics.emplace_back(name, pattern);
  }
  return metrics_to_yaml(metrics);
}

// The readiness and teardown keys belong to a service; a service runs on
// one host; a job runs on each host (`every`) or spans hosts (`nodes`).
Status check_placement_keys(const QueueEntry& entry, const std::string& path) {
  const EntryKey* service = nullptr;
  const EntryKey* other = nullptr;
  const EntryKey* nodes = nullptr;
  const EntryKey* every = nullptr;
  for (const auto& key : entry.keys) {
    if (key.name == "service")
      service = &key;
    else if (is_service_key(key.name) && !other)
      other = &key;
    if (key.name == k_nodes) nodes = &key;
    if (key.name == k_every) every = &key;
  }
  if (every && nodes)
    return Status::at(path, every->line,
                      "`every: host` runs a copy of the job on each host, and `nodes` one job "
                      "across hosts; remove one of them");
  if (other && !service)
    return Status::at(path, other->line,
                      fmt::format("`{}` is for a service; add `service: NAME` to this entry, or "
                                  "remove `{}`",
                                  other->name, other->name));
  if (service && nodes)
    return Status::at(path, nodes->line, "a service runs on one host; remove `nodes` or `service`");
  return Status();
}

// Adds `node`'s value to `key`'s values once it is checked.
Status add_value(EntryKey& key, const YAML::Node& node, const YAML::Node& at,
                 const std::string& path) {
  Result<std::string> value = scalar_value(node, at, path, key.name);
  if (!value) return value.status();
  key.values.push_back(*value);
  return check_reserved_value(key.name, node, *value, path);
}

Result<EntryKey> parse_key(const YAML::Node& key_node, const YAML::Node& value,
                           const std::string& path) {
  if (!key_node.IsScalar())
    return failure_at(path, key_node, "a key of a queue entry must be a plain name like `model`");
  EntryKey key;
  key.name = key_node.Scalar();
  key.line = line_of(key_node);
  if (key.name == k_metrics) {
    Result<std::string> metrics = metrics_value(value, key_node, path);
    if (!metrics) return metrics.status();
    key.values.push_back(*metrics);
  } else if (key.name == k_push && value.IsSequence()) {
    // One step's files, not a product: the paths as one value of words.
    std::string paths;
    for (const auto& element : value) {
      Result<std::string> path_value = scalar_value(element, element, path, key.name);
      if (!path_value) return path_value.status();
      if (path_value->empty() || path_value->find_first_of(" \t\n") != std::string::npos)
        return failure_at(path, element,
                          fmt::format("`push` takes paths without spaces, not `{}`", *path_value));
      paths += (paths.empty() ? "" : " ") + *path_value;
    }
    if (paths.empty())
      return failure_at(path, value, "`push` is an empty list; name files or folders");
    key.values.push_back(paths);
  } else if (value.IsSequence()) {
    key.was_list = true;
    if (value.size() == 0)
      return failure_at(
          path, value,
          fmt::format("`{}` is an empty list, which would give no jobs; give it at least one "
                      "value or remove the entry",
                      key.name));
    for (const auto& element : value)
      if (Status added = add_value(key, element, element, path); !added) return added;
  } else if (Status added = add_value(key, value, key_node, path); !added) {
    return added;
  }
  return key;
}

// Position of `command` first, then every other key in file order.
std::vector<std::size_t> expansion_order(const QueueEntry& entry) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < entry.keys.size(); ++i)
    if (entry.keys[i].name == k_command) order.push_back(i);
  for (std::size_t i = 0; i < entry.keys.size(); ++i)
    if (entry.keys[i].name != k_command) order.push_back(i);
  return order;
}

// The job that takes value `choice[i]` of key i (keys in file order).
JobSpec job_at(const QueueEntry& entry, const std::vector<std::size_t>& choice) {
  JobSpec job;
  job.line = entry.line;
  for (std::size_t i = 0; i < entry.keys.size(); ++i) {
    const EntryKey& key = entry.keys[i];
    const std::string& value = key.values[choice[i]];
    if (key.name == k_command)
      job.command = value;
    else if (key.name == k_slots)
      job.slots = slots_value(value);
    else if (key.name == k_nodes)
      job.nodes = slots_value(value);
    else if (is_service_key(key.name))
      set_service_key(job.service, key.name, value);
    else if (key.name == k_timeout) {
      job.timeout = parse_duration(value);
      job.timeout_text = value;
    } else if (key.name == k_retries)
      job.retries = parse_retries(value);
    else if (key.name == k_cancel)
      job.cancel = value;
    else if (key.name == k_allocation)
      job.allocation = parse_allocation(value).value_or(Allocation::first_fit);
    else if (key.name == k_metrics)
      job.metrics = metrics_from_yaml(value);
    else if (key.name == k_outputs)
      job.outputs = value;
    else if (key.name == k_outputs_cleanup)
      job.outputs_cleanup = value == "true";
    else if (key.name == k_every)
      job.every_host = value == "host";
    else if (key.name == k_push)
      job.push = value;
    else if (key.name == k_push_to)
      job.push_to = value;
    else
      job.params.emplace_back(key.name, value);
  }
  return job;
}

}  // namespace

const std::vector<std::string_view>& reserved_job_keys() {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> all = {
        k_command, k_slots,   k_timeout,         k_retries, k_cancel, k_allocation, k_nodes,
        k_metrics, k_outputs, k_outputs_cleanup, k_every,   k_push,   k_push_to};
    all.insert(all.end(), service_keys().begin(), service_keys().end());
    return all;
  }();
  return keys;
}

bool is_reserved_job_key(const std::string& key) {
  return std::find(reserved_job_keys().begin(), reserved_job_keys().end(), key) !=
         reserved_job_keys().end();
}

Result<QueueEntry> parse_queue_entry(const YAML::Node& item, const std::string& path) {
  QueueEntry entry;
  entry.line = line_of(item);
  entry.column = column_of(item);
  if (item.IsNull())
    return failure_at(path, item,
                      "empty queue entry; write a command after the `-`, or remove the line");
  if (item.IsSequence())
    return failure_at(
        path, item,
        "a queue entry must be a command or a mapping with a `command` key, not a list");
  if (item.IsScalar()) {
    entry.plain = true;
    entry.keys.push_back(EntryKey{k_command, {item.Scalar()}, false, entry.line});
    return entry;
  }
  std::set<std::string> seen;
  Result<std::vector<MappingPair>> pairs = merged_pairs(item, path);
  if (!pairs) return pairs.status();
  for (const MappingPair& pair : *pairs) {
    Result<EntryKey> key = parse_key(pair.key, pair.value, path);
    if (!key) return key.status();
    if (!seen.insert(key->name).second)
      return failure_at(
          path, pair.key,
          fmt::format("`{}` appears twice in this entry; keep one of them", key->name));
    entry.keys.push_back(std::move(*key));
  }
  // A step that only pushes files runs no command.
  if (!seen.count(k_command) && seen.count(k_push))
    entry.keys.insert(entry.keys.begin(), EntryKey{k_command, {""}, false, entry.line});
  else if (!seen.count(k_command))
    return failure_at(
        path, item,
        "this entry has no `command` key; add `command: ...` (the shell command to run)");
  if (Status buddy = check_buddy_slots(entry, path); !buddy) return buddy;
  if (Status placement = check_placement_keys(entry, path); !placement) return placement;
  return entry;
}

std::size_t job_count(const QueueEntry& entry) {
  std::size_t count = 1;
  for (const auto& key : entry.keys) {
    std::size_t n = key.values.size();
    if (n != 0 && count > std::numeric_limits<std::size_t>::max() / n)
      return std::numeric_limits<std::size_t>::max();
    count *= n;
  }
  return count;
}

std::vector<JobSpec> expand(const QueueEntry& entry) {
  std::vector<JobSpec> jobs;
  for_each_job(entry, [&](const JobSpec& job) { jobs.push_back(job); });
  return jobs;
}

void for_each_job(const QueueEntry& entry, const std::function<void(const JobSpec&)>& each) {
  for (const auto& key : entry.keys)
    if (key.values.empty()) return;
  std::vector<std::size_t> order = expansion_order(entry);
  std::vector<std::size_t> choice(entry.keys.size(), 0);
  while (true) {
    each(job_at(entry, choice));
    // Advance the odometer, the last key in expansion order fastest.
    std::size_t d = order.size();
    while (d > 0) {
      std::size_t key = order[d - 1];
      if (++choice[key] < entry.keys[key].values.size()) break;
      choice[key] = 0;
      --d;
    }
    if (d == 0) return;
  }
}

JobSpec first_job(const QueueEntry& entry) {
  return job_at(entry, std::vector<std::size_t>(entry.keys.size(), 0));
}

std::vector<QueueEntry> remainder_after_first(const QueueEntry& entry) {
  std::vector<QueueEntry> rest;
  std::vector<std::size_t> order = expansion_order(entry);
  // rank[i]: position of key i in expansion order.
  std::vector<std::size_t> rank(entry.keys.size());
  for (std::size_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  for (std::size_t split = order.size(); split-- > 0;) {
    if (entry.keys[order[split]].values.size() < 2) continue;
    QueueEntry part;
    part.line = entry.line;
    part.column = entry.column;
    for (std::size_t i = 0; i < entry.keys.size(); ++i) {
      const EntryKey& key = entry.keys[i];
      EntryKey out{key.name, {}, false, key.line};
      if (rank[i] < split)
        out.values.push_back(key.values.front());
      else if (rank[i] == split)
        out.values.assign(key.values.begin() + 1, key.values.end());
      else
        out.values = key.values;
      out.was_list = key.was_list || out.values.size() > 1;
      part.keys.push_back(std::move(out));
    }
    rest.push_back(std::move(part));
  }
  return rest;
}

QueueEntry canonical_entry(const JobSpec& job) {
  QueueEntry entry;
  entry.line = job.line;
  entry.keys.push_back(EntryKey{k_command, {job.command}, true, 0});
  for (const auto& [name, value] : job.params)
    entry.keys.push_back(EntryKey{name, {value}, true, 0});
  if (job.nodes) entry.keys.push_back(EntryKey{k_nodes, {std::to_string(*job.nodes)}, false, 0});
  if (job.every_host) entry.keys.push_back(EntryKey{k_every, {"host"}, false, 0});
  if (job.slots != 1)
    entry.keys.push_back(EntryKey{k_slots, {std::to_string(job.slots)}, false, 0});
  if (job.timeout) entry.keys.push_back(EntryKey{k_timeout, {job.timeout_text}, false, 0});
  if (job.retries)
    entry.keys.push_back(EntryKey{k_retries, {std::to_string(*job.retries)}, false, 0});
  if (!job.cancel.empty()) entry.keys.push_back(EntryKey{k_cancel, {job.cancel}, false, 0});
  if (job.allocation != Allocation::first_fit)
    entry.keys.push_back(EntryKey{k_allocation, {allocation_name(job.allocation)}, false, 0});
  if (!job.metrics.empty())
    entry.keys.push_back(EntryKey{k_metrics, {metrics_to_yaml(job.metrics)}, false, 0});
  if (!job.outputs.empty()) entry.keys.push_back(EntryKey{k_outputs, {job.outputs}, false, 0});
  if (job.outputs_cleanup) entry.keys.push_back(EntryKey{k_outputs_cleanup, {"true"}, false, 0});
  if (!job.push.empty()) entry.keys.push_back(EntryKey{k_push, {job.push}, false, 0});
  if (!job.push_to.empty()) entry.keys.push_back(EntryKey{k_push_to, {job.push_to}, false, 0});
  if (job.service)
    for (auto& [name, value] : service_keys(*job.service))
      entry.keys.push_back(EntryKey{name, {value}, false, 0});
  if (entry.keys.size() == 1) {
    entry.plain = true;
    entry.keys[0].was_list = false;
  }
  return entry;
}

}  // namespace runner
