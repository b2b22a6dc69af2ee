// Executor::put_files: local files copied to a host over its own
// connection. The host lists what it has of them; the files it lacks or
// has with another size, time or mode go as one tar archive, written here
// to a temporary file (shared by the hosts that lack the same files) and
// sent as the stdin of a `tar -x` there. Threading: none.
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "runner/core/lines.h"
#include "runner/exec/executor.h"
#include "runner/exec/program_output.h"

namespace runner {

namespace {

namespace fs = std::filesystem;

// The last lines of what a failed command said, on one line.
std::string what_it_said(const std::string& output) {
  std::string said;
  for_each_line(output, [&](std::string_view line) {
    if (!line.empty()) said = said.empty() ? std::string(line) : said + "; " + std::string(line);
  });
  constexpr std::size_t k_kept = 600;
  return said.size() > k_kept ? "..." + said.substr(said.size() - k_kept) : said;
}

// A fresh folder for the archive; removed with everything in it.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (fs::temp_directory_path() / "runner-push-XXXXXX").string();
    if (::mkdtemp(pattern.data())) m_path = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    if (!m_path.empty()) fs::remove_all(m_path, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

// Writes the archive of `files` (each under its path) as `folder`/push.tar.
Status write_archive(const std::vector<PushFile>& files, const std::string& folder) {
  std::map<std::string, std::string> names_by_root;  // NUL-separated, for tar -T
  for (const PushFile& file : files) names_by_root[file.root] += file.path + '\0';
  std::vector<std::string> argv = {"tar", "-cf", folder + "/push.tar", "--dereference",
                                   "--no-recursion", "--null", "--verbatim-files-from"};
  int index = 0;
  for (const auto& [root, names] : names_by_root) {
    std::string list = fmt::format("{}/names.{}", folder, index++);
    std::ofstream out(list, std::ios::binary);
    out << names;
    if (!out.flush()) return Status::error("cannot write " + list);
    // Each -C is taken from where the one before left tar: absolute, then.
    argv.insert(argv.end(), {"-C", fs::absolute(root).string(), "-T", list});
  }
  Result<std::string> made = program_output(argv);
  if (!made) return Status::error("the archive could not be made: " + made.status().message());
  return Status();
}

// The archives being sent, by what they hold: hosts that lack the same
// files (every host, on a first push) share one. An archive goes when the
// last host it was sent to is done with it.
std::map<std::string, std::weak_ptr<TemporaryFolder>>& archives_in_use() {
  static std::map<std::string, std::weak_ptr<TemporaryFolder>> archives;
  return archives;
}

std::string archive_key(const std::vector<PushFile>& files) {
  std::string key;
  for (const PushFile& file : files)
    key += fmt::format("{}:{}{}:{}{} {} {}\n", file.root.size(), file.root, file.path.size(),
                       file.path, file.size, file.mtime, file.mode);
  return key;
}

// The folder holding push.tar of `files`: one being sent already, or a new one.
Result<std::shared_ptr<TemporaryFolder>> archive_of(const std::vector<PushFile>& files) {
  auto& archives = archives_in_use();
  std::erase_if(archives, [](const auto& entry) { return entry.second.expired(); });
  std::string key = archive_key(files);
  if (auto found = archives.find(key); found != archives.end()) return found->second.lock();
  auto folder = std::make_shared<TemporaryFolder>();
  if (folder->path().empty())
    return Status::error("cannot make a temporary folder for the archive");
  if (Status written = write_archive(files, folder->path()); !written.ok()) return written;
  archives[key] = folder;
  return folder;
}

}  // namespace

Result<std::vector<PushFile>> local_push_files(const std::vector<std::string>& sources) {
  std::vector<PushFile> files;
  auto add = [&](const fs::path& root, const fs::path& path) -> Status {
    struct stat info {};
    fs::path full = root / path;
    if (::stat(full.c_str(), &info) != 0)
      return Status::error(fmt::format("{}: {}", full.string(), std::strerror(errno)));
    if (!S_ISREG(info.st_mode)) return Status();
    files.push_back({root.string(), path.generic_string(), static_cast<std::uint64_t>(info.st_size),
                     static_cast<std::int64_t>(info.st_mtim.tv_sec), info.st_mode & 07777u});
    return Status();
  };
  for (const std::string& source : sources) {
    fs::path path = fs::path(source).lexically_normal();
    if (path.has_filename() == false) path = path.parent_path();
    fs::path root = path.has_parent_path() ? path.parent_path() : fs::path(".");
    fs::path name = path.filename();
    if (name.empty() || name == "." || name == "..")
      return Status::error(source + ": name a file or a folder by its name (not . or ..)");
    std::error_code error;
    fs::file_status status = fs::status(path, error);
    if (error) return Status::error(fmt::format("{}: {}", source, error.message()));
    if (!fs::is_directory(status)) {
      if (!fs::is_regular_file(status))
        return Status::error(source + ": not a regular file or a folder");
      if (Status added = add(root, name); !added.ok()) return added;
      continue;
    }
    fs::recursive_directory_iterator walk(path, fs::directory_options::follow_directory_symlink,
                                          error);
    for (; !error && walk != fs::recursive_directory_iterator(); walk.increment(error)) {
      if (Status added = add(root, walk->path().lexically_relative(root)); !added.ok())
        return added;
    }
    if (error) return Status::error(fmt::format("{}: {}", source, error.message()));
  }
  return files;
}

void Executor::put_files(const std::vector<PushFile>& files, const std::string& to,
                         std::function<void(const PutResult&)> done) {
  auto listing = std::make_shared<std::string>();
  TaskId listing_command = run_command_streaming(
      host_listing_command(to, files),
      [listing](std::string_view bytes) { listing->append(bytes); },
      [this, files, to, listing, done = std::move(done)](const JobExit& exit,
                                                          const std::string& errors) {
        PutResult result;
        if (!exit.succeeded()) {
          result.lost = exit.lost();
          result.error = "listing what is under " + to + " failed: " +
                         (exit.error().empty() ? what_it_said(errors) : exit.error());
          done(result);
          return;
        }
        std::vector<PushFile> send = files_to_send(files, parse_host_listing(*listing));
        result.skipped = files.size() - send.size();
        if (send.empty()) {
          done(result);
          return;
        }
        Result<std::shared_ptr<TemporaryFolder>> archive = archive_of(send);
        if (!archive) {
          result.error = archive.status().message();
          done(result);
          return;
        }
        std::shared_ptr<TemporaryFolder> folder = *archive;
        for (const PushFile& file : send) result.bytes += file.size;
        TaskId unpacking = run_command_reading(
            unpack_command(to), folder->path() + "/push.tar",
            [folder, result, sent = send.size(), to, done](const JobExit& exit,
                                                           const std::string& output) mutable {
              if (exit.succeeded()) {
                result.sent = sent;
              } else {
                result.bytes = 0;
                result.lost = exit.lost();
                result.error = fmt::format(
                    "unpacking into {} failed: {}", to,
                    !exit.error().empty() ? exit.error()
                    : !output.empty()     ? what_it_said(output)
                                          : fmt::format("tar ended with status {}", exit.code()));
              }
              done(result);
            });
        track_transfer(unpacking);
      });
  track_transfer(listing_command);
}

}  // namespace runner
