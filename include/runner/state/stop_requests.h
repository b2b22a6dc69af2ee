// Requests to stop a service of a live run, made by `runner stop NAME` from
// another terminal: one file each in state_dir/requests/, holding the
// service's name, written whole (a temporary file renamed into place). The
// running runner watches that folder with inotify, reads each request once
// and removes it; requests found when it starts are stale (their runner is
// gone) and are removed unread.
//
// Threading: none.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "runner/core/file_system.h"
#include "runner/core/pollable.h"
#include "runner/core/result.h"
#include "runner/core/status.h"

namespace runner {

// `state_dir/requests`
std::string requests_dir(const std::string& state_dir);

// Asks the run of `state_dir` to stop the service `name`.
[[nodiscard]] Status request_stop(const std::string& state_dir, const std::string& name,
                                  FileSystem& fs = real_file_system());

// The running runner's side: calls `on_stop(name)` for each request.
class StopRequestWatcher final : public Pollable {
 public:
  // Creates the folder if needed, watches it and removes stale requests;
  // or says why the folder cannot be made or watched.
  static Result<std::unique_ptr<StopRequestWatcher>> open(
      const std::string& state_dir, std::function<void(const std::string& name)> on_stop);

  void poll_fds(std::vector<pollfd>& out) override;
  void step(Clock::time_point now) override;
  std::optional<Clock::time_point> deadline() const override { return std::nullopt; }

 private:
  StopRequestWatcher(std::string dir, FileDescriptor inotify,
                     std::function<void(const std::string&)> on_stop);

  // Reads and removes every request; `act`: pass them on (else they are stale).
  void take_requests(bool act);

  std::string m_dir;
  FileDescriptor m_inotify;
  std::function<void(const std::string&)> m_on_stop;
};

}  // namespace runner
