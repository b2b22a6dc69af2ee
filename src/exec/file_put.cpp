// ShellHostOps::put_files: local files copied to a host over its own
// connection. The host lists what it has of them; the files it lacks or
// has with another size, time or mode go as one tar archive (a
// PushArchive, shared by the hosts that lack the same files), sent once it
// is made as the stdin of a `tar -x` there. Threading: none; the archive is
// made by a process of its own while the event loop goes on.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "push_archive.h"
#include "runner/core/lines.h"
#include "runner/exec/shell_host_ops.h"

namespace runner {

namespace fs = std::filesystem;

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

void ShellHostOps::put_files(const std::vector<PushFile>& files, const std::string& to,
                             std::function<void(const PutResult&)> done) {
  auto listing = std::make_shared<std::string>();
  run_transfer(
      host_listing_command(to, files), std::nullopt,
      [listing](std::string_view bytes) { listing->append(bytes); },
      [this, files, to, listing, done = std::move(done)](const JobExit& exit,
                                                         const std::string& errors) {
        PutResult result;
        if (!exit.succeeded()) {
          result.lost = exit.lost();
          result.error = "listing what is under " + to +
                         " failed: " + (exit.error().empty() ? last_words(errors) : exit.error());
          done(result);
          return;
        }
        std::vector<PushFile> send = files_to_send(files, parse_host_listing(*listing));
        result.skipped = files.size() - send.size();
        if (send.empty()) {
          done(result);
          return;
        }
        Result<std::shared_ptr<PushArchive>> archive = PushArchive::of(send);
        if (!archive) {
          result.error = archive.status().message();
          done(result);
          return;
        }
        for (const PushFile& file : send) result.bytes += file.size;
        await_archive(*archive, [this, archive = *archive, result, sent = send.size(), to,
                                 done](const Status& made) mutable {
          if (!made.ok()) {
            result.bytes = 0;
            result.error = made.message();
            done(result);
            return;
          }
          run_transfer(
              unpack_command(to), archive->path(), nullptr,
              [archive, result, sent, to, done](const JobExit& exit,
                                                const std::string& output) mutable {
                if (exit.succeeded()) {
                  result.sent = sent;
                } else {
                  result.bytes = 0;
                  result.lost = exit.lost();
                  result.error = fmt::format(
                      "unpacking into {} failed: {}", to,
                      !exit.error().empty() ? exit.error()
                      : !output.empty()     ? last_words(output)
                                            : fmt::format("tar ended with status {}", exit.code()));
                }
                done(result);
              });
        });
      });
}

void ShellHostOps::await_archive(std::shared_ptr<PushArchive> archive,
                                 std::function<void(const Status&)> then) {
  if (std::optional<Status> made = archive->made()) {
    then(*made);
    return;
  }
  m_awaited_archives.push_back({std::move(archive), std::move(then)});
}

void ShellHostOps::poll_fds(std::vector<pollfd>& out) {
  for (const AwaitedArchive& awaited : m_awaited_archives)
    if (int fd = awaited.archive->pending_fd(); fd >= 0) out.push_back({fd, POLLIN, 0});
}

void ShellHostOps::step(Clock::time_point) {
  for (size_t i = 0; i < m_awaited_archives.size();) {
    std::optional<Status> made = m_awaited_archives[i].archive->made();
    if (!made) {
      ++i;
      continue;
    }
    AwaitedArchive awaited = std::move(m_awaited_archives[i]);
    m_awaited_archives.erase(m_awaited_archives.begin() + static_cast<std::ptrdiff_t>(i));
    awaited.then(*made);
  }
}

}  // namespace runner
