// What the command line asks for, one struct per subcommand. Filled by the
// CLI11 definitions each subcommand's file adds (subcommand.h); consumed by
// that file.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/config/hosts.h"
#include "runner/core/result.h"
#include "runner/exec/ssh/ssh_executor.h"
#include "runner/report/campaign.h"
#include "runner/report/results_table.h"
#include "runner/sched/scheduler.h"
#include "runner/ui/console.h"

namespace runner {

// `runner queue` and `runner broadcast`.
struct RunOptions {
  Mode mode = Mode::queue;
  std::string hosts_file = "hosts.yaml";
  std::string queue_file = "queue.yaml";
  std::string state_dir;  // empty: beside the queue file
  std::string outputs_dir;  // where `outputs:` go; empty: <state dir>/outputs
  bool daemon = false;
  bool ignore_errors = false;
  bool error_aborts = false;  // accepted for Pegasus files and scripts; the default
  std::size_t print_period = 1;
  ColorMode color = ColorMode::automatic;
  SshOptions ssh;
  bool dry_run = false;    // print every job with its slot and command; run and write nothing
  bool quiet = false;      // no job output and no status line on the terminal
  bool no_status = false;  // no status line
  // When things go wrong (see docs/troubleshooting.md).
  bool resume = false;        // check, clean up and rerun what a dead run left running
  std::string timeout;        // default `timeout:` of jobs, e.g. "2h"; empty: none
  int retries = 0;            // default `retries:` of jobs
  int max_requeue = 2;        // how often a job lost with its host is put back
  bool keep_orphans = false;  // do not kill what lost jobs left running
  // GPU telemetry (docs/files-and-results.md, "GPU energy and utilisation").
  bool no_gpu_monitor = false;    // read no host's GPUs
  std::string gpu_monitor_period;  // how often each GPU is read, e.g. "200ms"; empty: the default
  // Inside a Slurm allocation: its nodes and GPUs are the fleet, tasks are steps.
  bool slurm = false;
  int slots_per_node = 0;  // with slurm: slots per node; 0: one per GPU
};

// `runner lock`.
struct LockOptions {
  std::string queue_file = "queue.yaml";
  std::string editor;  // empty: $VISUAL, $EDITOR, then vim
};

// `runner add`.
struct AddOptions {
  std::string queue_file = "queue.yaml";
  std::vector<std::string> command;  // words of one command
  std::string from_file;             // a YAML list of entries to append
};

// `runner status`.
struct StatusOptions {
  std::string queue_file;  // empty: queue.yaml, and the run's own queue for the count
  std::string state_dir;   // empty: beside the queue file
  bool json = false;
  bool watch = false;
  double interval = 2.0;  // seconds between --watch refreshes
};

// `runner log`.
struct LogOptions {
  std::string queue_file = "queue.yaml";
  std::string state_dir;
  std::string job;  // "12" or "#12"
  bool follow = false;
  std::optional<int> rank;  // a gang job's rank whose log alone is shown
};

// `runner report`.
struct ReportOptions {
  std::string queue_file = "queue.yaml";
  std::string state_dir;
  std::string output;             // empty: state_dir/report.html; "-": stdout
  std::vector<std::string> runs;  // run ids; empty: the latest run
  bool all_runs = false;
  std::vector<std::string> plots;  // "METRIC:X:SERIES" of the results section
  std::vector<std::string> where;  // "COLUMN=VALUE": the results rows to show and plot
};

// `runner results`.
struct ResultsOptions {
  std::string queue_file = "queue.yaml";
  std::string state_dir;
  std::string format = "csv";      // csv, tsv, jsonl or markdown
  bool services = false;           // a row for each service too
  std::vector<std::string> where;  // "COLUMN=VALUE": the rows to show
};

// `runner stop`.
struct StopOptions {
  std::string queue_file = "queue.yaml";
  std::string state_dir;
  std::string service;   // `service: NAME`'s name, or "#ID"
  double timeout = 60;   // seconds to wait for it to end
};

int run_jobs(const RunOptions& options);
// `--dry-run` of queue and broadcast.
int dry_run_jobs(const RunOptions& options);
int show_status(const StatusOptions& options);
int show_log(const LogOptions& options);
int write_report(const ReportOptions& options);
// The campaign of `state_dir` for report and results, its skipped journal
// lines warned about on stderr; a ConfigError when no run is recorded there.
Campaign load_recorded_campaign(const std::string& state_dir);
int show_results(const ResultsOptions& options);
// The rows of `table` that meet the `--where` options (COLUMN=VALUE), each
// condition no row meets warned about on stderr; a ConfigError for one
// that is not COLUMN=VALUE or names no column.
ResultsTable rows_where_options(const ResultsTable& table, const std::vector<std::string>& where);
int stop_service(const StopOptions& options);

// Jobs in the queue file, read without the lock; 0 for a missing file,
// nullopt for one that does not parse.
std::optional<std::size_t> count_queued_jobs(const std::string& queue_file);
int lock_queue(const LockOptions& options);
int add_jobs(const AddOptions& options);

// `runner check`.
struct CheckOptions {
  std::string hosts_file = "hosts.yaml";
  SshOptions ssh;
  // How long `nvidia-smi -L` may take on a host once it is connected.
  std::chrono::seconds probe_timeout{30};
  // Check instead that the hosts reach each other over TCP (check_network).
  bool net = false;
};

int check_hosts(const CheckOptions& options);
int check_network(const CheckOptions& options);

// `runner push`.
struct PushOptions {
  std::string hosts_file = "hosts.yaml";
  SshOptions ssh;
  std::vector<std::string> sources;  // local files and folders
  std::string to = ".";              // the folder on each host, from its login directory
  std::vector<std::string> hosts;    // only these hosts of the fleet; empty: all
};

int push_files(const PushOptions& options);

// `runner hosts --detect`.
struct HostsOptions {
  std::vector<std::string> hosts;  // as hosts.yaml names them: node01, user@node02:2222
  bool write = false;              // write hosts_file (only where there is none)
  std::string hosts_file = "hosts.yaml";
  SshOptions ssh;
  std::chrono::seconds probe_timeout{30};  // for nvidia-smi -L, once connected
};

int detect_hosts(const HostsOptions& options);

// `runner submit`: an sbatch allocation that drains the queue.
struct SubmitOptions {
  std::string queue_file = "queue.yaml";
  std::string state_dir;  // empty: beside the queue file
  int nodes = 1;
  int gpus_per_node = 0;                  // 0: no --gres line
  int slots_per_node = 0;                 // passed on to `queue --slurm`; 0: one slot per GPU
  std::string time;                       // sbatch --time; empty: the partition's default
  std::string partition;                  // empty: the default partition
  std::vector<std::string> sbatch_lines;  // more `#SBATCH` options, as given
};

// The batch script for `options`: `#SBATCH` lines, then `runner` (the
// binary at `runner_path`) draining the queue with --slurm --daemon.
// `queue_file` and `state_dir` are absolute. An error naming the path or
// option, and the fix, for what a #SBATCH line cannot hold (a line break;
// in the state directory also a double quote or a backslash).
Result<std::string> submit_script(const SubmitOptions& options, const std::string& runner_path,
                                  const std::string& queue_file, const std::string& state_dir);
int submit_queue(const SubmitOptions& options);

// One SshContext for a command's SSH hosts, with the ssh configuration of
// every host of `fleet` resolved up front. Throws ConfigError when it cannot
// be used; `warn` gets notes (e.g. that the built-in parser read it).
std::shared_ptr<SshContext> prepare_ssh(const Fleet& fleet, const SshOptions& options,
                                        const std::function<void(const std::string&)>& warn);

}  // namespace runner
