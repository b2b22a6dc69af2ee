// `runner add CMD...` and `runner add -f FILE`: append jobs to the queue
// under the lock, so a running runner never sees half an edit.
#include <fmt/format.h>

#include <memory>

#include "fatal.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/queue/queue_document.h"
#include "runner/queue/queue_file.h"
#include "subcommand.h"

namespace runner {

namespace {

// The YAML items to append, and how many jobs they hold.
std::pair<std::string, std::size_t> items_to_add(const AddOptions& options) {
  std::string items;
  std::size_t jobs = 0;
  if (!options.from_file.empty()) {
    Result<std::string> read = read_file(options.from_file);
    if (!read)
      fatal_unless(Status::at(options.from_file, 0, "cannot read: " + read.status().message()));
    std::string text = std::move(*read);
    // Appended as written, comments included; parsed here to count and check.
    for (const EntrySpan& span :
         value_or_fatal(parse_queue_document(text, options.from_file)).entries)
      jobs += job_count(span.entry);
    items += text;
    if (!items.empty() && items.back() != '\n') items += '\n';
  }
  if (!options.command.empty()) {
    std::string command = fmt::format("{}", fmt::join(options.command, " "));
    QueueEntry entry;
    entry.plain = true;
    entry.keys.push_back(EntryKey{"command", {command}, false, 0});
    items += entry_to_yaml(entry);
    jobs += 1;
  }
  return {items, jobs};
}

}  // namespace

int add_jobs(const AddOptions& options) {
  if (options.command.empty() && options.from_file.empty())
    throw ConfigError("nothing to add: give a command (runner add echo hi) or -f FILE");
  auto [items, jobs] = items_to_add(options);
  if (jobs == 0) {
    fmt::print(stderr, "runner: {} holds no jobs; nothing added\n", options.from_file);
    return 0;
  }
  QueueFile queue(options.queue_file,
                  [](const std::string& m) { fmt::print(stderr, "runner: warning: {}\n", m); });
  if (Status added = queue.append(items); !added.ok()) {
    // A queue that does not parse is bad input, named with its place.
    if (!added.file().empty()) fatal_unless(added);
    fmt::print(stderr, "runner: error: {}\n", added.message());
    return 1;
  }
  fmt::print(stderr, "runner: added {} job{} to {}\n", jobs, jobs == 1 ? "" : "s",
             options.queue_file);
  return 0;
}

Subcommand add_add_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<AddOptions>();
  take(defaults.queue_file, options->queue_file);
  auto* add = app.add_subcommand("add", "Append a job (or the entries of a file) to the queue");
  add->add_option("-Q,--queue-file", options->queue_file, "The queue (default: queue.yaml)")
      ->envname(k_queue_file_env);
  add->add_option("-f,--file", options->from_file, "A YAML list of queue entries to append");
  add->add_option("command", options->command, "The command to append, as one job");
  add->positionals_at_end(true);
  set_example(*add, "runner add --queue-file queue.yaml 'python train.py --lr 0.01'");
  return {add, [options] { return add_jobs(*options); }};
}

}  // namespace runner
