// One entry of queue.yaml and the jobs it stands for. Pure logic: expansion
// of a product entry, the job it yields first, and the at most k entries that
// hold the rest (SPEC section 2).
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/config/allocation.h"
#include "runner/config/params.h"
#include "runner/config/service.h"
#include "runner/core/result.h"

namespace runner {

// Keys with a meaning of their own; never plain job parameters:
// "command", "slots", "nodes", "timeout", "retries", "cancel",
// "allocation_policy", "metrics", "outputs", "outputs_cleanup", "every",
// "push", "push_to", and a service's (service.h).
const std::vector<std::string_view>& reserved_job_keys();
bool is_reserved_job_key(const std::string& key);

// One key of a queue entry with all its values, as written.
struct EntryKey {
  std::string name;
  std::vector<std::string> values;  // a scalar is a list of one
  bool was_list = false;            // written as a YAML sequence
  int line = 0;                     // 1-based line of the key
};

// A queue.yaml entry. A plain string entry is represented as a single
// `command` key with was_list = false and plain = true.
struct QueueEntry {
  std::vector<EntryKey> keys;  // file order; always contains "command"
  bool plain = false;          // written as a bare string, not a mapping
  int line = 0;                // 1-based position of the entry's value
  int column = 0;
};

// One job: a command template plus its parameters.
struct JobSpec {
  std::string command;  // still a template
  Params params;        // non-reserved keys, file order
  int slots = 1;        // how many slots of one host it needs (of each host, with `nodes:`)
  int line = 0;         // line of the entry it came from
  // `timeout:` — stopped (TERM, then KILL) when it runs longer.
  std::optional<std::chrono::milliseconds> timeout;
  std::string timeout_text;  // as written, for consumed.yaml
  // `retries:` — how often a failed run is run again.
  std::optional<int> retries;
  // `cancel:` — a command template run on the job's slots to stop what its
  // process group cannot reach (e.g. a process inside a container).
  std::string cancel;
  // `allocation_policy:` — which of a host's free slots a job of several
  // slots gets (runner/sched/slot_allocation.h).
  Allocation allocation = Allocation::first_fit;
  // `nodes:` — a job that spans hosts: one task on each of this many
  // different hosts, ranked from 0, started and stopped together. Unset: a
  // job of one task, without the variables of a multi-node job.
  std::optional<int> nodes;
  // `every: host` — one copy of the job on each host (queue mode), each a
  // job of its own, taken together once every usable host has its slots
  // free: a server on every node, a look at every node mid-campaign.
  bool every_host = false;
  // `metrics:` — metric name → regular expression whose capture group finds
  // the metric's value in the job's log (the last match wins), file order.
  Params metrics;
  // `outputs:` — files the job leaves on its host, brought back when it
  // ends: shell words, globs and templates allowed, relative to the login
  // directory ("results/<<model>>.json logs/*.txt"). Empty: none.
  std::string outputs;
  // `outputs_cleanup: true` — removed from the host once brought back.
  bool outputs_cleanup = false;
  // `push:` — a broadcast step's local files and folders (paths separated
  // by spaces; a YAML list is joined), copied to every host before its
  // command runs there (runner push's transfer); without `command:`, the
  // step is the copy alone. Empty: none.
  std::string push;
  // `push_to:` — the folder on each host they go into, from the login
  // directory. Empty: the login directory.
  std::string push_to;
  // `service:` and its keys (service.h): it runs until the run ends.
  std::optional<ServiceSpec> service;
};

// Builds a QueueEntry from one item of the queue.yaml sequence. A failure
// naming path, line and column (Status::at) for: a mapping without `command` (or
// `push`), a
// nested mapping (but as `metrics`) or null as a value, an empty list, `slots`
// that is not a positive integer, a metric's regex that does not compile or
// has no capture group.
Result<QueueEntry> parse_queue_entry(const YAML::Node& item, const std::string& path);

// Number of jobs the entry stands for (product of list sizes).
std::size_t job_count(const QueueEntry& entry);

// All jobs, `command` slowest, then the other keys in file order, the last
// fastest (SPEC section 2).
std::vector<JobSpec> expand(const QueueEntry& entry);

// Calls `each` with the jobs of expand(entry), in that order, one at a
// time: a product of many keys need not fit in memory.
void for_each_job(const QueueEntry& entry, const std::function<void(const JobSpec&)>& each);

// The first job of expand(entry), without expanding the rest.
JobSpec first_job(const QueueEntry& entry);

// The entries that hold exactly the jobs of `entry` after its first one, in
// the same order: at most k entries for k keys, keys in the same order as
// `entry`, a key written as a list still a list when one value is left
// (Pegasus reads only lists), a key written as a scalar still a scalar.
// Empty when the entry had one job.
std::vector<QueueEntry> remainder_after_first(const QueueEntry& entry);

// A job in canonical form, as entries of consumed.yaml, in Pegasus' form: a
// command alone is a plain string; otherwise a mapping whose `command` and
// parameters are one-value lists (and `nodes` when set, `slots` when not 1, `timeout`,
// `retries`, `cancel` scalars, `metrics` a flow mapping).
QueueEntry canonical_entry(const JobSpec& job);

// YAML text of one sequence item ("- ..." lines, each ending in '\n'),
// indented by `indent` spaces. A plain entry is written as `- <scalar>`.
// Multi-line strings use literal block style. Parsing the text back with
// parse_queue_entry gives an equal entry (keys, values, plain).
std::string entry_to_yaml(const QueueEntry& entry, int indent = 0);

}  // namespace runner
