// Stop requests: files in state_dir/requests/ written by `runner stop` and
// taken by the running runner, which watches the folder with inotify.
#include "runner/state/stop_requests.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runner/core/inotify_failure.h"
#include "runner/state/state_dir.h"

namespace runner {

namespace {

constexpr const char* k_request_prefix = "stop.";

std::string system_error_text(int error) { return std::strerror(error); }

}  // namespace

std::string requests_dir(const std::string& state_dir) { return state_dir + "/requests"; }

Status request_stop(const std::string& state_dir, const std::string& name, FileSystem& fs) {
  std::string dir = requests_dir(state_dir);
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Status::error(dir + ": cannot create it: " + made.message());
  // Named by this process, so that two requests never share a file; the
  // watcher reads only names that start with the prefix, so never a
  // temporary one half written.
  std::string path = dir + "/" + k_request_prefix + std::to_string(::getpid());
  std::string temporary = dir + "/.writing." + std::to_string(::getpid());
  FileDescriptor fd = fs.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (!fd.valid()) return Status::error(temporary + ": cannot create it: " + system_error_text(errno));
  std::string text = name + "\n";
  ssize_t written = fs.write(fd.get(), text.data(), text.size());
  if (written != static_cast<ssize_t>(text.size()) || fd.close() != 0) {
    int error = errno;
    static_cast<void>(fs.unlink(temporary));
    return Status::error(temporary + ": cannot write it: " + system_error_text(error));
  }
  if (fs.rename(temporary, path) != 0) {
    int error = errno;
    static_cast<void>(fs.unlink(temporary));
    return Status::error(path + ": cannot put it in place: " + system_error_text(error));
  }
  return Status::ok_status();
}

Result<std::unique_ptr<StopRequestWatcher>> StopRequestWatcher::open(
    const std::string& state_dir, std::function<void(const std::string& name)> on_stop) {
  std::string dir = requests_dir(state_dir);
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Status::error(dir + ": cannot create it: " + made.message());
  std::string failed = "cannot watch " + dir + " for `runner stop` requests";
  FileDescriptor inotify(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify.valid()) return Status::error(inotify_failure(failed + ": inotify_init1", errno));
  if (inotify_add_watch(inotify.get(), dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0)
    return Status::error(inotify_failure(failed + ": inotify_add_watch", errno));
  std::unique_ptr<StopRequestWatcher> watcher(
      new StopRequestWatcher(std::move(dir), std::move(inotify), std::move(on_stop)));
  watcher->take_requests(false);
  return watcher;
}

StopRequestWatcher::StopRequestWatcher(std::string dir, FileDescriptor inotify,
                                       std::function<void(const std::string&)> on_stop)
    : m_dir(std::move(dir)), m_inotify(std::move(inotify)), m_on_stop(std::move(on_stop)) {}

void StopRequestWatcher::poll_fds(std::vector<pollfd>& out) {
  out.push_back({m_inotify.get(), POLLIN, 0});
}

void StopRequestWatcher::step(Clock::time_point) {
  alignas(inotify_event) char buffer[4096];
  bool news = false;
  while (::read(m_inotify.get(), buffer, sizeof buffer) > 0) news = true;
  // Whatever the events were, the folder says which requests wait.
  if (news) take_requests(true);
}

void StopRequestWatcher::take_requests(bool act) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(m_dir, error)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(k_request_prefix, 0) != 0) continue;
    std::ifstream in(entry.path());
    std::string name;
    std::getline(in, name);
    std::filesystem::remove(entry.path(), error);
    if (act && !name.empty()) m_on_stop(name);
  }
}

}  // namespace runner
