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

#include "runner/cli/options.h"
#include "runner/config/config_error.h"
#include "runner/exec/program_output.h"
#include "runner/exec/shell.h"
#include "runner/state/state_dir.h"

namespace runner {

std::string submit_script(const SubmitOptions& options, const std::string& runner_path,
                          const std::string& queue_file, const std::string& state_dir) {
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
  text += fmt::format("#SBATCH --output={}/slurm-%j.out\n", state_dir);
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
  ensure_state_dir(state_dir);
  std::string script_path = state_dir + "/submit.sbatch";
  std::string runner_path = fs::read_symlink("/proc/self/exe").string();
  std::ofstream(script_path) << submit_script(options, runner_path, queue_file, state_dir);
  if (!fs::exists(script_path)) throw ConfigError(script_path + ": cannot be written");
  Result<std::string> job = program_output({"sbatch", "--parsable", script_path});
  if (!job) throw ConfigError("runner submit: " + job.status().message());
  std::string id = job->substr(0, job->find_first_of(";\n"));
  fmt::print("submitted Slurm job {} ({}); its output: {}/slurm-{}.out\n", id, script_path,
             state_dir, id);
  fmt::print("watch it with: runner status --queue-file {} --watch\n", shell_quote(queue_file));
  return 0;
}

}  // namespace runner
