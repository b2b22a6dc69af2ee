// The words for a failed inotify call (see inotify_failure.h).
#include "runner/core/inotify_failure.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace runner {

std::string inotify_failure(const std::string& what, int error) {
  std::string text = fmt::format("{}: {}", what, std::strerror(error));
  if (error == EMFILE || error == ENFILE)
    text +=
        " (the user's inotify instances, or this process's file descriptors, are used up: stop "
        "programs that watch files, or raise the limit, e.g. `sudo sysctl "
        "fs.inotify.max_user_instances=1024`)";
  else if (error == ENOSPC)
    text +=
        " (the user's inotify watches are used up: raise the limit, e.g. `sudo sysctl "
        "fs.inotify.max_user_watches=524288`)";
  return text;
}

}  // namespace runner
