// The subcommands as the command line defines them: each `*_command.cpp`
// adds its own to the app, with its flags and the user's defaults they start
// from, and says how it runs once the command line is parsed; app.cpp only
// wires them. Also the flags several subcommands share. Threading: none.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>

#include "pegasus_command_line.h"
#include "runner/cli/options.h"
#include "user_defaults.h"

namespace runner {

// A subcommand added to the app, and what runs it when it is the one given.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

// Flags a user repeats can be set once in the environment instead; the
// command line wins. Each help line names its variable, and so does the man page.
constexpr const char* k_hosts_file_env = "RUNNER_HOSTS_FILE";
constexpr const char* k_queue_file_env = "RUNNER_QUEUE_FILE";
constexpr const char* k_ssh_config_env = "RUNNER_SSH_CONFIG";
constexpr const char* k_known_hosts_env = "RUNNER_KNOWN_HOSTS";

// Below the options of `--help` (and in the man page, made from it). Set on
// every command: CLI11 copies a parent's footer into later subcommands.
void set_example(CLI::App& app, const std::string& example);

// How hosts are reached: the ssh configuration and what overrides it.
void add_ssh_flags(CLI::App& app, SshOptions& ssh);

// A subcommand of a campaign's queue and state directory (status, log,
// report, results, stop, submit): --queue-file, from the user's default,
// and --state-dir.
CLI::App* add_campaign_command(CLI::App& app, const std::string& name,
                               const std::string& description, const UserDefaults& defaults,
                               std::string& queue_file, std::string& state_dir);

// A default from the user's config file, where it gives one.
void take(const std::optional<std::string>& configured, std::string& field);
void take_ssh(const UserDefaults& defaults, SshOptions& ssh);

// Each subcommand, in the order `runner --help` lists them. `ignored` gets
// the options a mode takes only for Pegasus.
Subcommand add_run_command(CLI::App& app, Mode mode, const UserDefaults& defaults,
                           IgnoredOptions& ignored);
Subcommand add_lock_command(CLI::App& app, const UserDefaults& defaults, IgnoredOptions& ignored);
Subcommand add_add_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_status_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_log_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_report_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_results_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_stop_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_check_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_push_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_hosts_command(CLI::App& app, const UserDefaults& defaults);
Subcommand add_submit_command(CLI::App& app, const UserDefaults& defaults);

}  // namespace runner
