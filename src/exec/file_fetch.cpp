// ShellHostOps::get_files: a job's output files brought back over the host's
// own connection, as one tar stream on the stdout of a runner's command,
// unpacked into the job's folder as it arrives (OutputUnpacker); and
// ShellHostOps::remove_files, which removes from the host exactly the files
// that came back, by their names as they came.
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "runner/core/lines.h"
#include "runner/exec/output_unpacker.h"
#include "runner/exec/shell.h"
#include "runner/exec/shell_host_ops.h"

namespace runner {

namespace {

// How the host's sh says that a word leaves the login directory.
constexpr std::string_view k_refused_prefix = "runner: ";

// The sh command that sends the files `patterns` name as a tar stream on
// its stdout. A word that has a `..` once the host's sh expanded it leaves
// the login directory: it is named on stderr and not sent (tar would store
// it without its `..`, as another file's name).
std::string fetch_command(const std::string& patterns) {
  return "set -- " + patterns + "; for word do shift; case /$word/ in */../*) printf '" +
         std::string(k_refused_prefix) +
         "%s: leaves the login directory; not brought back\\n' \"$word\" >&2 ;; *) set -- \"$@\" "
         "\"$word\" ;; esac; done; [ $# -eq 0 ] || exec tar -cf - -- \"$@\"";
}

// What the host said on stderr: the words it refused, and what its tar
// could not find (but its note on absolute paths).
void read_host_words(const std::string& errors, FetchedFiles& fetched) {
  for_each_line(errors, [&](std::string_view line) {
    if (line.empty() || line.find("Removing leading") != std::string_view::npos ||
        line.find("Exiting with failure") != std::string_view::npos)
      return;
    if (line.substr(0, k_refused_prefix.size()) == k_refused_prefix) {
      fetched.refused.emplace_back(line.substr(k_refused_prefix.size()));
      return;
    }
    fetched.missing += (fetched.missing.empty() ? "" : "; ") + std::string(line);
  });
}

// How long one command of remove_files may be: it reaches the host's sh
// as one argument of a `sh -c`, which Linux holds to 128 KiB.
constexpr std::size_t k_remove_command_bytes = 32 * 1024;

}  // namespace

void ShellHostOps::get_files(const std::string& patterns, const std::string& into,
                             std::function<void(const FetchedFiles&)> done) {
  std::error_code error;
  std::filesystem::create_directories(into, error);
  if (error) {
    FetchedFiles failed;
    failed.unwritten.push_back(
        fmt::format("the folder {} cannot be made: {}", into, error.message()));
    done(failed);
    return;
  }
  auto unpacker = std::make_shared<OutputUnpacker>(into);
  run_command_streaming(
      fetch_command(patterns), [unpacker](std::string_view bytes) { unpacker->feed(bytes); },
      [unpacker, done = std::move(done)](const JobExit& exit, const std::string& errors) {
        FetchedFiles fetched;
        static_cast<UnpackedFiles&>(fetched) = unpacker->finish();
        read_host_words(errors, fetched);
        fetched.lost = exit.lost();
        if (exit.lost()) {
          fetched.error = exit.error().empty() ? "the host was lost" : exit.error();
        } else if (fetched.error.empty() && !exit.succeeded() && fetched.files.empty() &&
                   fetched.missing.empty() && fetched.refused.empty()) {
          fetched.error = !exit.error().empty() ? exit.error()
                          : errors.empty()      ? "tar failed on the host"
                                                : "tar failed on the host: " + last_words(errors);
        }
        done(fetched);
      });
}

void ShellHostOps::remove_files(const std::vector<std::string>& paths, CommandDone done) {
  auto commands = std::make_shared<std::vector<std::string>>();
  for (const std::string& path : paths) {
    std::string word = " " + shell_quote(path);
    if (commands->empty() || commands->back().size() + word.size() > k_remove_command_bytes)
      commands->push_back("rm -f --");
    commands->back() += word;
  }
  if (commands->empty()) commands->push_back("true");
  run_in_turn(std::move(commands), 0, std::move(done));
}

void ShellHostOps::run_in_turn(std::shared_ptr<std::vector<std::string>> commands, std::size_t next,
                               CommandDone done) {
  const std::string& command = (*commands)[next];
  if (next + 1 == commands->size()) {
    run_command(command, std::move(done));
    return;
  }
  run_command(command, [this, commands, next, done = std::move(done)](const JobExit& exit,
                                                                      const std::string& output) {
    if (!exit.succeeded()) {
      done(exit, output);
      return;
    }
    run_in_turn(commands, next + 1, done);
  });
}

}  // namespace runner
