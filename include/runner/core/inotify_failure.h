// What a failed inotify call means to a user, and the fix: the limits on
// inotify instances and watches are the user's, shared by every program
// they run, so a run can meet them through no fault of its own.
#pragma once

#include <string>

namespace runner {

// "`what`: <errno text>" and, for the errors that a limit causes (EMFILE,
// ENFILE, ENOSPC), the sysctl that raises it.
std::string inotify_failure(const std::string& what, int error);

}  // namespace runner
