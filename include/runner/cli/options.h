// What the command line asks for, one struct per subcommand. Filled by the
// CLI11 definitions in app.cpp; consumed by one file per subcommand.
#pragma once

#include <string>
#include <vector>

#include "runner/exec/ssh_transport.h"
#include "runner/sched/scheduler.h"
#include "runner/ui/console.h"

namespace runner {

// `runner queue` and `runner broadcast`.
struct RunOptions {
  Mode mode = Mode::queue;
  std::string hosts_file = "hosts.yaml";
  std::string queue_file = "queue.yaml";
  std::string state_dir;  // empty: beside the queue file
  bool daemon = false;
  bool ignore_errors = false;
  bool error_aborts = false;  // accepted for Pegasus files and scripts; the default
  std::size_t print_period = 1;
  ColorMode color = ColorMode::automatic;
  SshOptions ssh;
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

int run_jobs(const RunOptions& options);
int lock_queue(const LockOptions& options);
int add_jobs(const AddOptions& options);

// The whole command line: parses, dispatches, maps errors to exit codes.
int run_cli(int argc, char** argv);

}  // namespace runner
