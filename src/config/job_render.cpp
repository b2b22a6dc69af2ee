// Job variables, rendered commands, and the up-front check that every
// queued job can be placed on the fleet and rendered. Pure logic.
#include "runner/config/job_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <unordered_set>

#include "runner/config/allocation.h"
#include "runner/config/multi_node.h"
#include "runner/config/template.h"

namespace runner {

namespace {

constexpr std::string_view k_command_key = "command";
constexpr std::string_view k_cancel_key = "cancel";
constexpr std::string_view k_nodes_key = "nodes";
constexpr std::string_view k_hostname_variable = "hostname";
constexpr std::string_view k_slots_variable = "slots";
constexpr std::string_view k_allocation_variable = "allocation_policy";
constexpr std::size_t k_max_listed_hosts = 5;

bool is_builtin(std::string_view name) {
  return name == k_hostname_variable || name == k_slots_variable || name == k_allocation_variable;
}

void add_unshadowed(Params& variables, std::string name, std::string value) {
  for (const auto& [existing, unused] : variables)
    if (existing == name) return;
  variables.emplace_back(std::move(name), std::move(value));
}

// `slot_ids` without the slots that share their product element with an
// earlier one: those have the same parameters by construction.
std::vector<int> one_slot_per_element(const Fleet& fleet, const std::vector<int>& slot_ids) {
  std::vector<int> kept;
  std::unordered_set<int> elements;
  for (int id : slot_ids) {
    int element = fleet.slots.at(id).element;
    if (element < 0 || elements.insert(element).second) kept.push_back(id);
  }
  return kept;
}

// What validation needs to know about one host.
struct HostSummary {
  std::string name;
  int slot_count = 0;
  std::unordered_set<std::string> common_keys;  // defined by every slot
  std::unordered_set<std::string> any_keys;     // defined by some slot
};

std::vector<HostSummary> summarize(const Fleet& fleet) {
  std::vector<HostSummary> summaries;
  summaries.reserve(fleet.hosts.size());
  for (const Host& host : fleet.hosts) {
    HostSummary summary;
    summary.name = host.name;
    summary.slot_count = static_cast<int>(host.slots.size());
    bool first = true;
    for (int slot_id : host.slots) {
      std::unordered_set<std::string> keys;
      for (const auto& [key, value] : fleet.slots[slot_id].params) keys.insert(key);
      summary.any_keys.insert(keys.begin(), keys.end());
      if (first) {
        summary.common_keys = std::move(keys);
        first = false;
      } else {
        std::erase_if(summary.common_keys, [&](const std::string& k) { return !keys.count(k); });
      }
    }
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

std::string list_hosts(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < k_max_listed_hosts; ++i)
    text += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > k_max_listed_hosts)
    text += fmt::format(" and {} more", names.size() - k_max_listed_hosts);
  return text;
}

// Checks the entries of one queue file against one fleet.
class Validator {
 public:
  Validator(const Fleet& fleet, const std::string& queue_path, JobPlacement placement)
      : m_hosts(summarize(fleet)), m_path(queue_path), m_placement(placement) {
    for (const HostSummary& host : m_hosts)
      if (!m_largest || host.slot_count > m_largest->slot_count) m_largest = &host;
  }

  Status check(const QueueEntry& entry) {
    Result<std::pair<int, int>> range = slot_range(entry);
    if (!range) return range.status();
    auto [fewest, most] = *range;
    if (Status slots = check_slots(entry, most); !slots) return slots;
    if (Status nodes = check_nodes(entry, most); !nodes) return nodes;
    std::vector<const HostSummary*> eligible;
    for (const HostSummary& host : m_hosts)
      if (m_placement == JobPlacement::broadcast || host.slot_count >= fewest)
        eligible.push_back(&host);

    for (const EntryKey& key : entry.keys) {
      if (key.name != k_command_key && key.name != k_cancel_key) continue;
      for (const std::string& command : key.values) {
        Result<std::vector<std::string>> names = template_variables(command);
        if (!names) return failure(entry, names.status().message());
        for (const std::string& name : *names)
          if (Status defined = check_variable(entry, command, name, eligible); !defined)
            return defined;
      }
    }
    // Its ready_log's groups are variables of the entries after it.
    if (const EntryKey* service = find_key(entry, "service"))
      for (const std::string& name : service->values) m_services.insert(name);
    return Status();
  }

 private:
  Status failure(const QueueEntry& entry, const std::string& message) const {
    return Status::at(m_path, entry.line, entry.column, message);
  }

  Result<std::pair<int, int>> slot_range(const QueueEntry& entry) const {
    int fewest = 1;
    int most = 1;
    for (const EntryKey& key : entry.keys) {
      if (key.name != k_slots_variable) continue;
      bool first = true;
      for (const std::string& text : key.values) {
        int count = 0;
        auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
        if (error != std::errc() || end != text.data() + text.size() || count < 1)
          return Status::at(m_path, key.line,
                            fmt::format("`slots` must be a positive integer (got `{}`)", text));
        fewest = first ? count : std::min(fewest, count);
        most = first ? count : std::max(most, count);
        first = false;
      }
    }
    return std::pair{fewest, most};
  }

  Status check_slots(const QueueEntry& entry, int most) const {
    if (m_placement == JobPlacement::broadcast) {
      if (most > 1)
        return failure(entry,
                       fmt::format("job needs {} slots, but broadcast runs every job on each slot "
                                   "alone; remove `slots` or use queue mode",
                                   most));
      return Status();
    }
    int largest = m_largest ? m_largest->slot_count : 0;
    if (most > largest)
      return failure(entry,
                     fmt::format("job needs {} slots but the largest host has {}{}", most, largest,
                                 m_largest ? fmt::format(" ({})", m_largest->name) : ""));
    return Status();
  }

  // A job of `nodes: N` needs N hosts that each have its slots; `every:
  // host` places a job in queue mode as broadcast does every job.
  Status check_nodes(const QueueEntry& entry, int most_slots) const {
    if (m_placement == JobPlacement::broadcast && find_key(entry, "every"))
      return failure(entry,
                     "`every: host` runs a job once on each host in queue mode; broadcast runs "
                     "every job on each slot already; remove `every`");
    const EntryKey* nodes = find_key(entry, k_nodes_key);
    if (!nodes) return Status();
    if (m_placement == JobPlacement::broadcast)
      return failure(entry,
                     "`nodes:` makes a job that spans hosts, but broadcast runs every job on each "
                     "slot alone; remove `nodes` or use queue mode");
    int hosts = 0;
    for (const HostSummary& host : m_hosts) hosts += host.slot_count >= most_slots ? 1 : 0;
    for (const std::string& text : nodes->values) {
      int wanted = 0;
      std::from_chars(text.data(), text.data() + text.size(), wanted);
      if (wanted > hosts)
        return failure(entry,
                       fmt::format("job needs {} nodes with {} slot{} each, but the hosts file has "
                                   "{} such host{}",
                                   wanted, most_slots, most_slots == 1 ? "" : "s", hosts,
                                   hosts == 1 ? "" : "s"));
    }
    return Status();
  }

  static const EntryKey* find_key(const QueueEntry& entry, std::string_view name) {
    for (const EntryKey& key : entry.keys)
      if (key.name == name) return &key;
    return nullptr;
  }

  Status check_variable(const QueueEntry& entry, const std::string& command,
                        const std::string& name,
                        const std::vector<const HostSummary*>& eligible) const {
    if (is_builtin(name)) return Status();
    if (is_multi_node_variable(name) && find_key(entry, k_nodes_key)) return Status();
    if (std::size_t dot = name.find('.');
        dot != std::string::npos && m_services.count(name.substr(0, dot)))
      return Status();
    for (const EntryKey& key : entry.keys)
      if (key.name == name && !is_reserved_job_key(key.name)) return Status();

    std::vector<std::string> lacking;
    bool some_define = false;
    for (const HostSummary* host : eligible) {
      bool somewhere = host->any_keys.count(name) > 0;
      some_define = some_define || somewhere;
      if (!host->common_keys.count(name))
        lacking.push_back(somewhere ? host->name + " (some slots)" : host->name);
    }
    if (lacking.empty()) return Status();
    if (!some_define) {
      std::string angle = "<<" + name + ">>";
      std::string shell_text =
          command.find(angle) == std::string::npos
              ? ""
              : fmt::format(", or write `\\{0}` if the shell is to get `{0}` as written", angle);
      return failure(entry,
                     fmt::format("the command uses `{0}`, which is not defined; add `{0}:` to this "
                                 "entry or to the hosts in the hosts file{1}",
                                 name, shell_text));
    }
    return failure(entry,
                   fmt::format("the command uses `{0}`, which not every host that could run it "
                               "defines: {1} {2} it; add `{0}:` to those hosts or to this entry",
                               name, list_hosts(lacking), lacking.size() == 1 ? "lacks" : "lack"));
  }

  std::vector<HostSummary> m_hosts;
  std::unordered_set<std::string> m_services;  // named by the entries checked so far
  const HostSummary* m_largest = nullptr;
  const std::string& m_path;
  JobPlacement m_placement;
};

}  // namespace

Params job_variables(const JobSpec& job, const Fleet& fleet, const std::vector<int>& slot_ids,
                     const Params& builtins) {
  assert(!slot_ids.empty());
  const Slot& first = fleet.slots.at(slot_ids.front());
  assert(std::all_of(slot_ids.begin(), slot_ids.end(),
                     [&](int id) { return fleet.slots.at(id).host == first.host; }));

  Params variables = builtins;
  add_unshadowed(variables, std::string(k_hostname_variable), fleet.hosts.at(first.host).name);
  std::string indices;
  for (int id : slot_ids)
    indices += (indices.empty() ? "" : ",") + std::to_string(fleet.slots[id].index);
  add_unshadowed(variables, std::string(k_slots_variable), indices);
  add_unshadowed(variables, std::string(k_allocation_variable), allocation_name(job.allocation));

  const std::vector<int> distinct = one_slot_per_element(fleet, slot_ids);
  for (const auto& [key, unused] : first.params) {
    std::string joined;
    bool everywhere = true;
    for (std::size_t i = 0; i < distinct.size() && everywhere; ++i) {
      std::optional<std::string> value = find_param(fleet.slots[distinct[i]].params, key);
      if (!value)
        everywhere = false;
      else
        joined += (i == 0 ? "" : ",") + *value;
    }
    if (everywhere) add_unshadowed(variables, key, joined);
  }
  for (const auto& [key, value] : job.params) add_unshadowed(variables, key, value);
  return variables;
}

std::string slots_label(const Fleet& fleet, const std::vector<int>& slot_ids) {
  if (slot_ids.size() == 1) return fleet.slots[slot_ids.front()].label;
  const Slot& first = fleet.slots[slot_ids.front()];
  std::string label = fleet.hosts[first.host].name;
  const std::vector<int> distinct = one_slot_per_element(fleet, slot_ids);
  for (const auto& [key, value] : first.params) {
    std::vector<std::string> values;
    for (int s : distinct) values.push_back(find_param(fleet.slots[s].params, key).value_or("?"));
    label += fmt::format(" {}={}", key, fmt::join(values, ","));
  }
  if (first.params.empty() || distinct.size() < slot_ids.size()) {
    std::vector<std::string> indices;
    for (int s : slot_ids) indices.push_back(std::to_string(fleet.slots[s].index));
    label += fmt::format(" #{}", fmt::join(indices, ","));
  }
  return label;
}

Result<std::string> render_for_job(std::string_view text, const JobSpec& job, const Fleet& fleet,
                                   const std::vector<int>& slot_ids, const Params& builtins) {
  Params variables = job_variables(job, fleet, slot_ids, builtins);
  return render_template(text, [&](std::string_view name) { return find_param(variables, name); });
}

Result<std::string> render_job(const JobSpec& job, const Fleet& fleet,
                               const std::vector<int>& slot_ids, const Params& builtins) {
  return render_for_job(job.command, job, fleet, slot_ids, builtins);
}

Status validate_jobs(const std::vector<QueueEntry>& entries, const Fleet& fleet,
                     const std::string& queue_path, JobPlacement placement) {
  Validator validator(fleet, queue_path, placement);
  for (const QueueEntry& entry : entries)
    if (Status checked = validator.check(entry); !checked) return checked;
  return Status();
}

}  // namespace runner
