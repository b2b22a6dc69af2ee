// The command line: subcommands and flags (Pegasus' included), dispatch,
// and the mapping of fatal errors to exit status 2.
#include <algorithm>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/state/state_dir.h"

namespace runner {

namespace {

void add_run_flags(CLI::App& app, RunOptions& o) {
  app.add_option("--hosts-file", o.hosts_file, "The fleet (default: hosts.yaml)");
  app.add_option("--queue-file", o.queue_file, "The queue (default: queue.yaml)");
  app.add_option("--state-dir", o.state_dir,
                 "Journal and job logs (default: beside the queue file, queue.runner/)");
  app.add_flag("-d,--daemon", o.daemon, "Keep running and pick up jobs as they are added");
  app.add_flag("-i,--ignore-errors", o.ignore_errors,
               "Broadcast: go on to the next job when one fails");
  // Older Pegasus spelling of the default broadcast behaviour.
  app.add_flag("-e,--error-aborts", o.error_aborts,
               "Broadcast: stop after a failed job (the default; older Pegasus spelling)");
  app.add_option("-p,--print-period", o.print_period,
                 "Print every Nth output line of each job; 0 prints none (default 1)");
  app.add_option("--color", o.color, "Colour slot prefixes: auto, always, never")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ColorMode>{{"auto", ColorMode::automatic},
                                           {"always", ColorMode::always},
                                           {"never", ColorMode::never}},
          CLI::ignore_case));
  app.add_option("--known-hosts", o.ssh.known_hosts,
                 "known_hosts file to check host keys against (default ~/.ssh/known_hosts)");
  app.add_flag("--accept-new-host-keys", o.ssh.accept_new_host_keys,
               "Add unknown host keys to known_hosts instead of refusing (changed keys are "
               "always refused)");
  app.add_option("--identity", o.ssh.identity_files,
                 "Private key to authenticate with (repeatable; default: ssh-agent, then "
                 "~/.ssh/id_ed25519, id_ecdsa, id_rsa)");
  app.add_flag("!--no-agent", o.ssh.use_agent, "Do not use ssh-agent identities");
}

// Pegasus takes its mode as a positional argument among flags
// (`pegasus -d q`); CLI11 wants the subcommand before its flags. Moves the
// first mode word to the front.
std::vector<std::string> mode_first(int argc, char** argv) {
  static const std::set<std::string> modes = {"queue", "q", "broadcast", "b", "lock", "l", "add"};
  std::vector<std::string> args(argv + 1, argv + argc);
  auto mode = std::find_if(args.begin(), args.end(),
                           [](const std::string& a) { return modes.count(a) > 0; });
  if (mode != args.end()) std::rotate(args.begin(), mode, mode + 1);
  return args;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"runner: drain a queue of shell commands onto a fleet of GPU nodes over SSH"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "runner 0.1.0");

  RunOptions queue_options;
  auto* queue = app.add_subcommand("queue", "Run each job once, on the next free slot(s)");
  queue->alias("q");
  add_run_flags(*queue, queue_options);

  RunOptions broadcast_options;
  broadcast_options.mode = Mode::broadcast;
  auto* broadcast =
      app.add_subcommand("broadcast", "Run each job on every slot, in lockstep");
  broadcast->alias("b");
  add_run_flags(*broadcast, broadcast_options);

  LockOptions lock_options;
  auto* lock = app.add_subcommand("lock", "Lock the queue and edit it");
  lock->alias("l");
  lock->add_option("--queue-file", lock_options.queue_file, "The queue (default: queue.yaml)");
  lock->add_option("--editor", lock_options.editor, "Editor (default: $VISUAL, $EDITOR, vim)");

  AddOptions add_options;
  auto* add = app.add_subcommand("add", "Append a job (or the entries of a file) to the queue");
  add->add_option("--queue-file", add_options.queue_file, "The queue (default: queue.yaml)");
  add->add_option("-f,--file", add_options.from_file, "A YAML list of queue entries to append");
  add->add_option("command", add_options.command, "The command to append, as one job");
  add->positionals_at_end(true);

  try {
    std::vector<std::string> args = mode_first(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last to first
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*queue) return run_jobs(queue_options);
    if (*broadcast) return run_jobs(broadcast_options);
    if (*lock) return lock_queue(lock_options);
    if (*add) return add_jobs(add_options);
  } catch (const ConfigError& e) {
    fmt::print(stderr, "runner: error: {}\n", e.what());
    return 2;
  } catch (const StateError& e) {
    fmt::print(stderr, "runner: error: {}\n", e.what());
    return 2;
  }
  return 2;
}

}  // namespace runner
