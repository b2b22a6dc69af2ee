// A push's archive, made by a tar of its own (see push_archive.h).
#include "push_archive.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "runner/core/file_system.h"
#include "runner/core/lines.h"
#include "spawn_in_own_group.h"

namespace runner {

namespace {

namespace fs = std::filesystem;

// The archives in use, by what they hold: hosts that lack the same files
// (every host, on a first push) share one.
std::map<std::string, std::weak_ptr<PushArchive>>& archives_in_use() {
  static std::map<std::string, std::weak_ptr<PushArchive>> archives;
  return archives;
}

std::string archive_key(const std::vector<PushFile>& files) {
  std::string key;
  for (const PushFile& file : files)
    key += fmt::format("{}:{}{}:{}{} {} {}\n", file.root.size(), file.root, file.path.size(),
                       file.path, file.size, file.mtime, file.mode);
  return key;
}

}  // namespace

Result<std::shared_ptr<PushArchive>> PushArchive::of(const std::vector<PushFile>& files) {
  auto& archives = archives_in_use();
  std::erase_if(archives, [](const auto& entry) { return entry.second.expired(); });
  std::string key = archive_key(files);
  if (auto found = archives.find(key); found != archives.end()) return found->second.lock();
  std::shared_ptr<PushArchive> archive(new PushArchive());
  if (Status started = archive->start(files); !started.ok()) return started;
  archives[key] = archive;
  return archive;
}

Status PushArchive::start(const std::vector<PushFile>& files) {
  std::string pattern = (fs::temp_directory_path() / "runner-push-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    return Status::error(fmt::format("cannot make a temporary folder for the archive in {}: {}",
                                     fs::temp_directory_path().string(), std::strerror(errno)));
  m_folder = pattern;
  std::map<std::string, std::string> names_by_root;  // NUL-separated, for tar -T
  for (const PushFile& file : files) names_by_root[file.root] += file.path + '\0';
  std::vector<std::string> argv = {
      "tar", "-cf", path(), "--dereference", "--no-recursion", "--null", "--verbatim-files-from"};
  int index = 0;
  for (const auto& [root, names] : names_by_root) {
    std::string list = fmt::format("{}/names.{}", m_folder, index++);
    std::ofstream out(list, std::ios::binary);
    out << names;
    if (!out.flush()) return Status::error("cannot write " + list);
    // Each -C is taken from where the one before left tar: absolute, then.
    argv.insert(argv.end(), {"-C", fs::absolute(root).string(), "-T", list});
  }
  std::vector<const char*> args;
  for (const std::string& word : argv) args.push_back(word.c_str());
  args.push_back(nullptr);
  std::string errors_path = m_folder + "/tar.err";
  FileDescriptor errors(
      ::open(errors_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  FileDescriptor nothing(::open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!errors.valid() || !nothing.valid())
    return Status::error(fmt::format(
        "cannot open {}: {}", errors.valid() ? "/dev/null" : errors_path, std::strerror(errno)));
  std::string tar = program_on_path("tar");
  // A group of its own: the Ctrl-C that asks runner to finish what it does
  // does not stop the archive.
  int error = spawn_in_own_group(m_pid, tar.c_str(), args.data(),
                                 ChildStreams{nothing.get(), nothing.get(), errors.get()});
  if (error != 0) return Status::error(fmt::format("cannot run {}: {}", tar, std::strerror(error)));
  m_pidfd = static_cast<int>(::syscall(SYS_pidfd_open, m_pid, 0));
  if (m_pidfd < 0)
    return Status::error(
        fmt::format("pidfd_open: {} (Linux 5.3 or later is needed)", std::strerror(errno)));
  return Status();
}

std::optional<Status> PushArchive::made() {
  if (m_made || m_pid <= 0) return m_made;
  int status = 0;
  pid_t ended = ::waitpid(m_pid, &status, WNOHANG);
  if (ended == 0 || (ended < 0 && errno == EINTR)) return std::nullopt;
  std::string unseen = ended < 0 ? std::strerror(errno) : "";
  m_pid = -1;
  ::close(std::exchange(m_pidfd, -1));
  if (ended > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    m_made = Status();
    return m_made;
  }
  std::string how = !unseen.empty() ? "tar's end could not be seen: " + unseen
                    : WIFEXITED(status)
                        ? fmt::format("tar exited with status {}", WEXITSTATUS(status))
                        : fmt::format("tar was killed by signal {}", WTERMSIG(status));
  std::string said =
      last_words(read_whole_file(real_file_system(), m_folder + "/tar.err").value_or(""));
  m_made =
      Status::error("the archive could not be made: " + how + (said.empty() ? "" : ": " + said));
  return m_made;
}

PushArchive::~PushArchive() {
  if (m_pid > 0) {
    ::kill(-m_pid, SIGKILL);
    while (::waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (m_pidfd >= 0) ::close(m_pidfd);
  std::error_code ignored;
  if (!m_folder.empty()) fs::remove_all(m_folder, ignored);
}

}  // namespace runner
