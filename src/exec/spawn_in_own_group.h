// Private to exec: starting a process that runner runs for the user (a job
// on a local slot, a ProxyCommand). It gets signals as a fresh process has
// them (nothing blocked; INT, TERM, HUP, QUIT, PIPE and CHLD at their
// defaults, whatever runner does with them) and a process group of its own,
// so that runner can signal the group, and Ctrl-C at the terminal reaches
// runner alone.
#pragma once

#include <spawn.h>
#include <sys/types.h>

namespace runner {

// posix_spawn of `path` with `argv` (null-terminated) and runner's
// environment; `actions` sets up its file descriptors. Sets `pid`; returns
// 0, or the error number.
int spawn_in_own_group(pid_t& pid, const char* path, const char* const argv[],
                       const posix_spawn_file_actions_t& actions);

}  // namespace runner
