// Executor::get_files: a job's output files brought back over the host's own
// connection, as one tar stream on the stdout of a runner's command, written
// to a local archive and unpacked into the job's folder.
#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "runner/core/lines.h"
#include "runner/exec/executor.h"
#include "runner/exec/file_digest.h"
#include "runner/exec/program_output.h"
#include "runner/exec/shell.h"

namespace runner {

namespace {

constexpr const char* k_archive_name = ".incoming.tar";

// The lines of what the host's tar said, but its note on absolute paths.
std::string what_was_missing(const std::string& errors) {
  std::string missing;
  for_each_line(errors, [&](std::string_view line) {
    if (line.empty() || line.find("Removing leading") != std::string_view::npos ||
        line.find("Exiting with failure") != std::string_view::npos)
      return;
    missing += (missing.empty() ? "" : "; ") + std::string(line);
  });
  return missing;
}

// Unpacks `archive` into `into` and lists its files with their sizes and
// SHA-256, read here once unpacked.
FetchedFiles unpack(const std::string& archive, const std::string& into) {
  FetchedFiles fetched;
  Result<std::string> listing = program_output({"tar", "-tf", archive});
  Result<std::string> unpacked =
      listing ? program_output({"tar", "-xf", archive, "-C", into}) : listing;
  if (!unpacked) {
    fetched.error = "the files that came back could not be unpacked: " +
                    unpacked.status().message();
    return fetched;
  }
  for_each_line(*listing, [&](std::string_view line) {
    std::string path(line);
    struct stat info {};
    if (path.empty() || ::stat((into + "/" + path).c_str(), &info) != 0 || !S_ISREG(info.st_mode))
      return;
    Result<std::string> digest = file_sha256(into + "/" + path);
    fetched.files.push_back(
        {path, static_cast<std::uint64_t>(info.st_size), digest ? *digest : std::string()});
  });
  return fetched;
}

}  // namespace

void Executor::get_files(const std::string& patterns, const std::string& into,
                         std::function<void(const FetchedFiles&)> done) {
  std::error_code error;
  std::filesystem::create_directories(into, error);
  std::string archive = into + "/" + k_archive_name;
  auto file = std::make_shared<std::ofstream>(archive, std::ios::binary | std::ios::trunc);
  if (error || !*file) {
    FetchedFiles failed;
    failed.error = fmt::format("cannot write {}: {}", archive,
                               error ? error.message() : std::string("cannot open it"));
    done(failed);
    return;
  }
  // tar names on stderr what it cannot find, and still sends the rest.
  run_command_streaming(
      "tar -cf - -- " + patterns,
      [file](std::string_view bytes) { file->write(bytes.data(), bytes.size()); },
      [file, archive, into, done = std::move(done)](const JobExit& exit,
                                                    const std::string& errors) {
        file->close();
        FetchedFiles fetched;
        std::error_code size_error;
        bool empty = std::filesystem::file_size(archive, size_error) == 0 || size_error;
        if (exit.lost() || (empty && !exit.succeeded())) {
          fetched.lost = exit.lost();
          fetched.error = !exit.error().empty() ? exit.error() : what_was_missing(errors);
          if (fetched.error.empty()) fetched.error = "tar failed on the host";
        } else if (!file->good()) {
          fetched.error = "could not write " + archive;
        } else {
          fetched = unpack(archive, into);
        }
        if (!exit.lost() && fetched.error.empty()) fetched.missing = what_was_missing(errors);
        std::filesystem::remove(archive, size_error);
        done(fetched);
      });
}

void Executor::remove_files(const std::vector<std::string>& paths, CommandDone done) {
  std::string command = "rm -f --";
  for (const std::string& path : paths) command += " " + shell_quote(path);
  run_command(command, std::move(done));
}

}  // namespace runner
