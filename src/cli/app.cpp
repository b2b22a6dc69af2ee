// The command line: the top level's flags and help, the subcommands wired in
// (each defines its own flags in its *_command.cpp; subcommand.h), dispatch,
// and the mapping of fatal errors to exit status 2.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "build_info.h"
#include "pegasus_command_line.h"
#include "runner/cli/last_resort.h"
#include "runner/cli/run_cli.h"
#include "runner/config/config_error.h"
#include "runner/core/debug_log.h"
#include "runner/exec/ssh/ssh_executor.h"
#include "runner/state/state_dir.h"
#include "subcommand.h"
#include "user_defaults.h"

namespace runner {

namespace {

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
  const std::vector<Subcommand> subcommands{
      add_run_command(app, Mode::queue, defaults, ignored),
      add_run_command(app, Mode::broadcast, defaults, ignored),
      add_lock_command(app, defaults, ignored),
      add_add_command(app, defaults),
      add_status_command(app, defaults),
      add_log_command(app, defaults),
      add_report_command(app, defaults),
      add_results_command(app, defaults),
      add_stop_command(app, defaults),
      add_check_command(app, defaults),
      add_push_command(app, defaults),
      add_hosts_command(app, defaults),
      add_submit_command(app, defaults),
  };

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
    for (const Subcommand& subcommand : subcommands)
      if (*subcommand.app) return subcommand.run();
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
