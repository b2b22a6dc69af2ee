// `runner submit`: writes a batch script beside the campaign's state and
// hands it to sbatch. The script runs `runner queue --slurm --daemon` on
// the queue file, so the queue is edited from the login node (runner add,
// runner lock) while the allocation drains it, and status, log and report
// read the shared state directory. --resume: an allocation that Slurm
// requeues takes up what the one before left.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string_view>

#include "fatal.h"
#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/exec/shell.h"
#include "runner/exec/slurm/program_output.h"
#include "runner/state/state_dir.h"
#include "subcommand.h"

namespace runner {

namespace {

// What a byte that a #SBATCH line cannot hold is called; empty for one it can.
std::string_view unwritable(char c) {
  if (c == '\n' || c == '\r') return "a line break";
  if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "a control character";
  return {};
}

// `value` (what `what` names) when a #SBATCH line can hold it: a line break
// would end the directive there and make the rest a command of the job.
Status one_line(const std::string& value, const std::string& what) {
  for (char c : value)
    if (std::string_view name = unwritable(c); !name.empty())
      return Status::error(fmt::format(
          "runner submit: {} {:?} holds {}, which a #SBATCH line cannot hold; remove it", what,
          value, name));
  return Status::ok_status();
}

// The state directory as a #SBATCH line's argument names it: sbatch reads
// those lines itself, not the shell. It splits a line at blanks, takes
// "..." and '...' as quotes and a backslash as an escape, and ends it at an
// unquoted `#`; --output then expands %j and the like (%% is a %), and a
// backslash in the name turns that off. So the folder goes in double quotes
// with % doubled, and one with a character that cannot be written so is
// refused.
Result<std::string> directive_folder(const std::string& state_dir) {
  std::string written;
  for (char c : state_dir) {
    std::string_view name = unwritable(c);
    if (c == '"') name = "a double quote";
    if (c == '\\') name = "a backslash";
    if (!name.empty())
      return Status::error(fmt::format(
          "runner submit: the state directory {:?} holds {}, which sbatch cannot take in the "
          "batch script's #SBATCH --output line; pass --state-dir with a folder whose path has "
          "no line break, control character, double quote or backslash",
          state_dir, name));
    written += c == '%' ? "%%" : std::string(1, c);
  }
  return written;
}

}  // namespace

Result<std::string> submit_script(const SubmitOptions& options, const std::string& runner_path,
                                  const std::string& queue_file, const std::string& state_dir) {
  Result<std::string> folder = directive_folder(state_dir);
  if (!folder) return folder.status();
  Status values = one_line(options.time, "--time");
  values.update(one_line(options.partition, "--partition"));
  for (const std::string& line : options.sbatch_lines) values.update(one_line(line, "--sbatch"));
  if (!values) return values;
  std::string text = "#!/bin/sh\n#SBATCH --job-name=runner\n";
  text += fmt::format("#SBATCH --nodes={}\n", options.nodes);
  if (options.gpus_per_node > 0) {
    text += fmt::format("#SBATCH --gres=gpu:{}\n", options.gpus_per_node);
    // A CPU for each GPU, so that each job's step can hold a GPU of its own.
    text += "#SBATCH --cpus-per-gpu=1\n";
  }
  if (!options.time.empty()) text += fmt::format("#SBATCH --time={}\n", options.time);
  if (!options.partition.empty())
    text += fmt::format("#SBATCH --partition={}\n", options.partition);
  text += fmt::format("#SBATCH --output=\"{}/slurm-%j.out\"\n", *folder);
  text += "#SBATCH --requeue\n";
  for (const std::string& line : options.sbatch_lines) text += fmt::format("#SBATCH {}\n", line);
  text += fmt::format(
      "exec {} queue --slurm --daemon --resume --no-status --queue-file {} --state-dir {}",
      shell_quote(runner_path), shell_quote(queue_file), shell_quote(state_dir));
  if (options.slots_per_node > 0)
    text += fmt::format(" --slots-per-node {}", options.slots_per_node);
  return text + "\n";
}

int submit_queue(const SubmitOptions& options) {
  namespace fs = std::filesystem;
  if (!fs::exists(options.queue_file))
    throw ConfigError(options.queue_file, 0, 0,
                      "queue file not found (create it, or pass --queue-file)");
  std::string queue_file = fs::absolute(options.queue_file).string();
  std::string state_dir = fs::absolute(options.state_dir.empty() ? state_dir_for(options.queue_file)
                                                                 : options.state_dir)
                              .string();
  std::string runner_path = fs::read_symlink("/proc/self/exe").string();
  Result<std::string> script = submit_script(options, runner_path, queue_file, state_dir);
  if (!script) throw ConfigError(script.status().message());
  fatal_unless(ensure_state_dir(state_dir));
  std::string script_path = state_dir + "/submit.sbatch";
  std::ofstream(script_path) << *script;
  if (!fs::exists(script_path)) throw ConfigError(script_path + ": cannot be written");
  Result<std::string> job = program_output({"sbatch", "--parsable", script_path});
  if (!job) throw ConfigError("runner submit: " + job.status().message());
  std::string id = job->substr(0, job->find_first_of(";\n"));
  fmt::print("submitted Slurm job {} ({}); its output: {}/slurm-{}.out\n", id, script_path,
             state_dir, id);
  fmt::print("watch it with: runner status --queue-file {} --watch\n", shell_quote(queue_file));
  return 0;
}

Subcommand add_submit_command(CLI::App& app, const UserDefaults& defaults) {
  auto options = std::make_shared<SubmitOptions>();
  auto* submit = add_campaign_command(
      app, "submit", "Submit a Slurm batch job that drains the queue (queue --slurm --daemon)",
      defaults, options->queue_file, options->state_dir);
  submit->add_option("-N,--nodes", options->nodes, "Nodes of the allocation (default 1)")
      ->check(CLI::PositiveNumber);
  submit
      ->add_option("--gpus-per-node", options->gpus_per_node,
                   "GPUs of each node (--gres=gpu:N; default none)")
      ->check(CLI::NonNegativeNumber);
  submit
      ->add_option("--slots-per-node", options->slots_per_node,
                   "Slots per node instead of one per GPU")
      ->check(CLI::PositiveNumber);
  submit->add_option("-t,--time", options->time, "The allocation's time limit (sbatch --time)");
  submit->add_option("-p,--partition", options->partition, "The partition (sbatch --partition)");
  submit->add_option("--sbatch", options->sbatch_lines,
                     "One more sbatch option, written as an #SBATCH line (repeatable), e.g. "
                     "--sbatch=--account=lab");
  set_example(*submit,
              "runner submit --queue-file queue.yaml --nodes 2 --gpus-per-node 8 --time 24:00:00");
  return {submit, [options] { return submit_queue(*options); }};
}

}  // namespace runner
