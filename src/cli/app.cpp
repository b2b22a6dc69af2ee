// The command line: subcommands and flags (Pegasus' included), dispatch,
// and the mapping of fatal errors to exit status 2.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "build_info.h"
#include "pegasus_command_line.h"
#include "runner/cli/last_resort.h"
#include "runner/cli/options.h"
#include "runner/cli/run_cli.h"
#include "runner/config/config_error.h"
#include "runner/core/debug_log.h"
#include "runner/exec/ssh/ssh_executor.h"
#include "runner/state/state_dir.h"
#include "user_defaults.h"

namespace runner {

namespace {

// Below the options of `--help` (and in the man page, made from it). Set on
// every command: CLI11 copies a parent's footer into later subcommands.
void set_example(CLI::App& app, const std::string& example) {
  app.footer("Example:\n  " + example);
}

// Flags a user repeats can be set once in the environment instead; the
// command line wins. Each help line names its variable, and so does the man page.
constexpr const char* k_hosts_file_env = "RUNNER_HOSTS_FILE";
constexpr const char* k_queue_file_env = "RUNNER_QUEUE_FILE";
constexpr const char* k_ssh_config_env = "RUNNER_SSH_CONFIG";
constexpr const char* k_known_hosts_env = "RUNNER_KNOWN_HOSTS";

// How hosts are reached: the ssh configuration and what overrides it.
void add_ssh_flags(CLI::App& app, SshOptions& ssh) {
  app.add_option("--ssh-config", ssh.config_file,
                 "OpenSSH client configuration to resolve hosts with, like ssh -F (default "
                 "~/.ssh/config)")
      ->envname(k_ssh_config_env);
  app.add_option("--known-hosts", ssh.known_hosts,
                 "known_hosts file to check host keys against (default: the ssh configuration's, "
                 "~/.ssh/known_hosts)")
      ->envname(k_known_hosts_env);
  app.add_flag("--accept-new-host-keys", ssh.accept_new_host_keys,
               "Add unknown host keys to known_hosts instead of refusing, like "
               "StrictHostKeyChecking accept-new (changed keys are always refused)");
  app.add_option("--identity", ssh.identity_files,
                 "Private key to authenticate with (repeatable; default: ssh-agent, then the ssh "
                 "configuration's IdentityFile, ~/.ssh/id_ed25519, id_ecdsa, id_rsa)");
  app.add_flag("!--no-agent", ssh.use_agent, "Do not use ssh-agent identities");
}

void add_run_flags(CLI::App& app, RunOptions& o, IgnoredOptions& ignored) {
  app.add_option("-H,--hosts-file", o.hosts_file, "The fleet (default: hosts.yaml)")
      ->envname(k_hosts_file_env);
  app.add_option("-Q,--queue-file", o.queue_file, "The queue (default: queue.yaml)")
      ->envname(k_queue_file_env);
  ignored.add_option(app, "--editor");
  app.add_option("--state-dir", o.state_dir,
                 "Journal and job logs (default: beside the queue file, queue.runner/)");
  app.add_option("--outputs-dir", o.outputs_dir,
                 "Where the files of jobs' `outputs:` are brought back to, <dir>/<id>/ each "
                 "(default: outputs/ in the state directory); results and report find them there");
  app.add_flag("-d,--daemon", o.daemon, "Keep running and pick up jobs as they are added");
  app.add_flag("-i,--ignore-errors", o.ignore_errors,
               "Broadcast: go on to the next job when one fails");
  // Older Pegasus spelling of the default broadcast behaviour.
  app.add_flag("-e,--error-aborts", o.error_aborts,
               "Broadcast: stop after a failed job (the default; older Pegasus spelling)");
  app.add_option("-p,--print-period", o.print_period,
                 "Print every Nth output line of each job; 0 prints none (default 1)");
  app.add_option("--color", o.color, "Colour slot prefixes: auto, always, never")
      ->transform(
          CLI::CheckedTransformer(std::map<std::string, ColorMode>{{"auto", ColorMode::automatic},
                                                                   {"always", ColorMode::always},
                                                                   {"never", ColorMode::never}},
                                  CLI::ignore_case));
  add_ssh_flags(app, o.ssh);
  app.add_flag("--resume", o.resume,
               "After a crash: check the jobs the last run left running, kill what is left of "
               "them, and run them again first");
  app.add_option("--timeout", o.timeout,
                 "Stop jobs that run longer than this (90s, 45m, 2h, 1h30m) unless they say "
                 "`timeout:` themselves");
  app.add_option("--retries", o.retries,
                 "Run a failed job again up to N times unless it says `retries:` itself")
      ->check(CLI::Range(0, 1000));
  app.add_option("--max-requeue", o.max_requeue,
                 "Put a job lost with its host back in the queue up to N times (default 2)")
      ->check(CLI::Range(0, 1000));
  app.add_flag("--keep-orphans", o.keep_orphans,
               "Do not kill what lost jobs left running when their host comes back");
  app.add_flag("--no-gpu-monitor", o.no_gpu_monitor,
               "Do not read the GPUs' energy, power, utilisation and memory while jobs run");
  app.add_option("--gpu-monitor-period", o.gpu_monitor_period,
                 "How often each GPU is read while jobs run (default 200ms)");
  app.add_flag("-n,--dry-run", o.dry_run,
               "Print every job with the slot it would get and its rendered command; run "
               "nothing, change no file");
  app.add_flag("--quiet", o.quiet,
               "No job output and no status line on the terminal (logs keep everything)");
  app.add_flag("--no-status", o.no_status, "No live status line below the output");
  app.add_flag("--slurm", o.slurm,
               "Inside a Slurm allocation (salloc, sbatch): its nodes are the fleet, one slot "
               "per GPU with the parameter `gpu`; each job runs in a step of its own (srun)");
  app.add_option("--slots-per-node", o.slots_per_node,
                 "With --slurm: this many slots per node instead of one per GPU")
      ->check(CLI::Range(1, 100000));
}

// --queue-file and --state-dir of the commands that read a campaign.
void add_state_flags(CLI::App& app, std::string& queue_file, std::string& state_dir) {
  app.add_option("-Q,--queue-file", queue_file,
                 "The campaign's queue; its state is beside it (default: queue.yaml)")
      ->envname(k_queue_file_env);
  app.add_option("--state-dir", state_dir,
                 "The campaign's state directory (default: queue.runner/)");
}

// A default from the user's config file, where it gives one.
void take(const std::optional<std::string>& configured, std::string& field) {
  if (configured) field = *configured;
}

void take_ssh(const UserDefaults& defaults, SshOptions& ssh) {
  take(defaults.ssh_config, ssh.config_file);
  take(defaults.known_hosts, ssh.known_hosts);
}

// The command line parsed and run; an error that it expects is said here.
int parse_and_run(int argc, char** argv) {
  // Defaults below the environment and the command line: they are the
  // values the options start from.
  UserDefaults defaults;
  try {
    defaults = load_user_defaults(user_defaults_path());
  } catch (const ConfigError& e) {
    fmt::print(stderr, "runner: error: {}\n", e.what());
    return 2;
  }

  CLI::App app{"runner: drain a queue of shell commands onto a fleet of GPU nodes over SSH",
               "runner"};
  app.require_subcommand(1);
  app.set_version_flag("-V,--version", fmt::format("{}\nlibssh2 {}", build_description(),
                                                   libssh2_runtime_version()));
  // `runner q -V`: what a mode does not know, the top level may.
  app.fallthrough();
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity,
               "Say each step with hosts on stderr: connecting, authentication (each method "
               "tried and why it failed), channels; why jobs wait or run again. -vv: details "
               "too. Also RUNNER_LOG=info or debug. A run keeps the steps in debug.log in its "
               "state directory either way");
  IgnoredOptions ignored;

  RunOptions queue_options;
  take(defaults.hosts_file, queue_options.hosts_file);
  take(defaults.queue_file, queue_options.queue_file);
  take_ssh(defaults, queue_options.ssh);
  auto* queue = app.add_subcommand("queue", "Run each job once, on the next free slot(s)");
  queue->alias("q");
  add_run_flags(*queue, queue_options, ignored);
  set_example(*queue, "runner queue --hosts-file hosts.yaml --queue-file queue.yaml --timeout 2h");

  RunOptions broadcast_options = queue_options;
  broadcast_options.mode = Mode::broadcast;
  auto* broadcast = app.add_subcommand("broadcast", "Run each job on every slot, in lockstep");
  broadcast->alias("b");
  add_run_flags(*broadcast, broadcast_options, ignored);
  set_example(*broadcast, "runner broadcast --hosts-file hosts.yaml --queue-file setup-nodes.yaml");

  LockOptions lock_options;
  take(defaults.queue_file, lock_options.queue_file);
  auto* lock = app.add_subcommand("lock", "Lock the queue and edit it");
  lock->alias("l");
  lock->add_option("-Q,--queue-file", lock_options.queue_file, "The queue (default: queue.yaml)")
      ->envname(k_queue_file_env);
  lock->add_option("--editor", lock_options.editor, "Editor (default: $VISUAL, $EDITOR, vim)");
  ignored.add_option(*lock, "-H,--hosts-file");
  ignored.add_flag(*lock, "-d,--daemon");
  ignored.add_flag(*lock, "-i,--ignore-errors");
  ignored.add_flag(*lock, "-e,--error-aborts");
  ignored.add_option(*lock, "-p,--print-period");
  set_example(*lock, "runner lock --queue-file queue.yaml --editor nano");

  AddOptions add_options;
  take(defaults.queue_file, add_options.queue_file);
  auto* add = app.add_subcommand("add", "Append a job (or the entries of a file) to the queue");
  add->add_option("-Q,--queue-file", add_options.queue_file, "The queue (default: queue.yaml)")
      ->envname(k_queue_file_env);
  add->add_option("-f,--file", add_options.from_file, "A YAML list of queue entries to append");
  add->add_option("command", add_options.command, "The command to append, as one job");
  add->positionals_at_end(true);
  set_example(*add, "runner add --queue-file queue.yaml 'python train.py --lr 0.01'");

  StatusOptions status_options;
  take(defaults.queue_file, status_options.queue_file);
  auto* status = app.add_subcommand("status", "Show what a running (or finished) campaign does");
  add_state_flags(*status, status_options.queue_file, status_options.state_dir);
  status->add_flag("--json", status_options.json,
                   "One JSON object (one line per refresh with --watch)");
  status->add_flag("-w,--watch", status_options.watch, "Refresh until the run ends");
  status->add_option("--interval", status_options.interval, "Seconds between refreshes (default 2)")
      ->check(CLI::PositiveNumber);
  set_example(*status, "runner status --queue-file queue.yaml --watch");

  LogOptions log_options;
  take(defaults.queue_file, log_options.queue_file);
  auto* log = app.add_subcommand("log", "Print a job's saved output");
  add_state_flags(*log, log_options.queue_file, log_options.state_dir);
  log->add_option("job", log_options.job, "The job's id (12 or #12)")->required();
  log->add_flag("-f,--follow", log_options.follow, "Keep printing while the job runs");
  log->add_option("--rank", log_options.rank,
                  "For a job with nodes: only this rank's log, as written (default: every "
                  "rank's, each line prefixed with its rank and host)");
  set_example(*log, "runner log --queue-file queue.yaml --follow 12");

  ReportOptions report_options;
  take(defaults.queue_file, report_options.queue_file);
  auto* report = app.add_subcommand("report", "Write an HTML report of a campaign");
  add_state_flags(*report, report_options.queue_file, report_options.state_dir);
  report->add_option("-o,--output", report_options.output,
                     "Where to write it (default: report.html in the state directory; - for "
                     "stdout)");
  report->add_option("--run", report_options.runs,
                     "Show this run (repeatable; default the latest)");
  report->add_flag("--all", report_options.all_runs, "Show every run of the state directory");
  report->add_option("--plot", report_options.plots,
                     "Plot a metric of the results against a parameter, one line per value of "
                     "others: METRIC:X:SERIES[,SERIES...], or relative to a baseline: "
                     "METRIC/COLUMN=VALUE:X:SERIES (repeatable)");
  report->add_option("--where", report_options.where,
                     "Show and plot only the results whose COLUMN is VALUE: COLUMN=VALUE "
                     "(repeatable; several values of one column: any of them)");
  set_example(*report, "runner report --queue-file queue.yaml --plot throughput:batch:model");

  ResultsOptions results_options;
  take(defaults.queue_file, results_options.queue_file);
  auto* results = app.add_subcommand(
      "results", "Print one table of a campaign: a row per job, its parameters and metrics");
  add_state_flags(*results, results_options.queue_file, results_options.state_dir);
  results->add_option("--format", results_options.format, "csv (default), tsv, jsonl or markdown")
      ->check(CLI::IsMember({"csv", "tsv", "jsonl", "markdown"}));
  results->add_flag("--services", results_options.services,
                    "Add a row for each service (`service:`), with its state");
  results->add_option("--where", results_options.where,
                      "Only the rows whose COLUMN is VALUE: COLUMN=VALUE (repeatable; several "
                      "values of one column: any of them)");
  set_example(*results, "runner results --queue-file queue.yaml --format markdown");

  StopOptions stop_options;
  take(defaults.queue_file, stop_options.queue_file);
  auto* stop = app.add_subcommand(
      "stop", "Stop a service of the running campaign (its cancel:, TERM, KILL, after:)");
  add_state_flags(*stop, stop_options.queue_file, stop_options.state_dir);
  stop->add_option("service", stop_options.service,
                   "The service's name (`service: NAME`), or its job id as #12")
      ->required();
  stop->add_option("--timeout", stop_options.timeout,
                   "Seconds to wait for it to end (default 60)")
      ->check(CLI::PositiveNumber);
  set_example(*stop, "runner stop --queue-file queue.yaml dht");

  CheckOptions check_options;
  take(defaults.hosts_file, check_options.hosts_file);
  take_ssh(defaults, check_options.ssh);
  auto* check = app.add_subcommand(
      "check", "Connect to every host as a run would; print how, and the GPUs nvidia-smi lists");
  check->add_option("-H,--hosts-file", check_options.hosts_file, "The fleet (default: hosts.yaml)")
      ->envname(k_hosts_file_env);
  check->add_flag("--net", check_options.net,
                  "Check instead that every host reaches every other over TCP, as the ranks of a "
                  "multi-node job must: print each host's interfaces and addresses, which of "
                  "them answered each other host (a listener on a free port from 29400 up, for "
                  "the check only, with python3, perl or nc), and warnings (no path, a path only "
                  "over docker0/lo/virbr*/veth*, an unreachable master address); exit 1 when a "
                  "pair cannot be shown to connect");
  add_ssh_flags(*check, check_options.ssh);
  set_example(*check, "runner check --hosts-file hosts.yaml\n  runner check --net --hosts-file hosts.yaml");

  PushOptions push_options;
  take(defaults.hosts_file, push_options.hosts_file);
  take_ssh(defaults, push_options.ssh);
  auto* push = app.add_subcommand(
      "push", "Copy local files and folders to every host, sending only what a host lacks or "
              "has with another size, time or mode");
  push->add_option("sources", push_options.sources, "Files and folders to copy")->required();
  push->add_option("--to", push_options.to,
                   "The folder on each host to copy them into, from the login directory "
                   "(default: the login directory itself)");
  push->add_option("--hosts", push_options.hosts, "Only these hosts of the fleet")
      ->delimiter(',');
  push->add_option("-H,--hosts-file", push_options.hosts_file, "The fleet (default: hosts.yaml)")
      ->envname(k_hosts_file_env);
  add_ssh_flags(*push, push_options.ssh);
  set_example(*push, "runner push data/ model.bin --to work\n  runner push data --hosts node01,node02");

  HostsOptions hosts_options;
  take_ssh(defaults, hosts_options.ssh);
  bool detect = false;
  auto* hosts = app.add_subcommand(
      "hosts", "Ask hosts which GPUs they have (nvidia-smi -L) and print the hosts.yaml for them");
  hosts->add_flag("--detect", detect, "Ask the hosts named (required)")->required();
  hosts->add_option("host", hosts_options.hosts, "Hosts as hosts.yaml names them")->required();
  hosts->add_flag("--write", hosts_options.write,
                  "Write it to --hosts-file instead of printing it (never over an existing file)");
  hosts->add_option("-H,--hosts-file", hosts_options.hosts_file,
                    "Where --write writes (default: hosts.yaml)");
  add_ssh_flags(*hosts, hosts_options.ssh);
  set_example(*hosts, "runner hosts --detect node01 node02 user@node03:2222 > hosts.yaml");

  SubmitOptions submit_options;
  take(defaults.queue_file, submit_options.queue_file);
  auto* submit = app.add_subcommand(
      "submit", "Submit a Slurm batch job that drains the queue (queue --slurm --daemon)");
  add_state_flags(*submit, submit_options.queue_file, submit_options.state_dir);
  submit->add_option("-N,--nodes", submit_options.nodes, "Nodes of the allocation (default 1)")
      ->check(CLI::PositiveNumber);
  submit
      ->add_option("--gpus-per-node", submit_options.gpus_per_node,
                   "GPUs of each node (--gres=gpu:N; default none)")
      ->check(CLI::NonNegativeNumber);
  submit
      ->add_option("--slots-per-node", submit_options.slots_per_node,
                   "Slots per node instead of one per GPU")
      ->check(CLI::PositiveNumber);
  submit->add_option("-t,--time", submit_options.time,
                     "The allocation's time limit (sbatch --time)");
  submit->add_option("-p,--partition", submit_options.partition,
                     "The partition (sbatch --partition)");
  submit->add_option("--sbatch", submit_options.sbatch_lines,
                     "One more sbatch option, written as an #SBATCH line (repeatable), e.g. "
                     "--sbatch=--account=lab");
  set_example(*submit,
              "runner submit --queue-file queue.yaml --nodes 2 --gpus-per-node 8 --time 24:00:00");

  set_example(app,
              "runner queue --hosts-file hosts.yaml --queue-file queue.yaml\n"
              "`runner SUBCOMMAND --help` tells more, with an example.");
  app.footer(app.get_footer() +
             "\n\nDefaults for the flags you repeat: ~/.config/runner/config.yaml (or "
             "$XDG_CONFIG_HOME/runner/config.yaml) with the keys hosts_file, queue_file, "
             "ssh_config and known_hosts, then the environment (RUNNER_HOSTS_FILE, "
             "RUNNER_QUEUE_FILE, RUNNER_SSH_CONFIG, RUNNER_KNOWN_HOSTS), then the command line.");

  try {
    std::vector<std::string> args = pegasus_order(argc, argv);
    std::reverse(args.begin(), args.end());  // CLI11 takes them last to first
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  ignored.say_given();
  debug_log::set_console_verbosity(std::max(verbosity, debug_log::verbosity_from_environment()));

  try {
    if (*queue) return run_jobs(queue_options);
    if (*broadcast) return run_jobs(broadcast_options);
    if (*lock) return lock_queue(lock_options);
    if (*add) return add_jobs(add_options);
    if (*status) return show_status(status_options);
    if (*log) return show_log(log_options);
    if (*report) return write_report(report_options);
    if (*results) return show_results(results_options);
    if (*stop) return stop_service(stop_options);
    if (*check) return check_hosts(check_options);
    if (*push) return push_files(push_options);
    if (*hosts) return detect_hosts(hosts_options);
    if (*submit) return submit_queue(submit_options);
  } catch (const ConfigError& e) {
    fmt::print(stderr, "runner: error: {}\n", e.what());
    return 2;
  } catch (const StateError& e) {
    fmt::print(stderr, "runner: error: {}\n", e.what());
    return 2;
  }
  return 2;
}

}  // namespace

int run_cli(int argc, char** argv) {
  return with_last_resort([&] { return parse_and_run(argc, argv); });
}

}  // namespace runner
