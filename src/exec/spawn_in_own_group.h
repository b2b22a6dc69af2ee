// Private to exec: starting a process that runner runs for the user (a job
// on a local slot, a ProxyCommand). It gets signals as a fresh process has
// them (nothing blocked; INT, TERM, HUP, QUIT, TSTP, PIPE and CHLD at their
// defaults, whatever runner does with them) and a process group of its own
// before it can run any of its own code, so that runner can signal the
// group, and Ctrl-C at the terminal reaches runner alone: a signal sent to
// runner's group while the child was still in it was meant for runner, and
// the child drops it.
#pragma once

#include <sys/types.h>

#include <string>

namespace runner {

// A child's stdin, stdout and stderr: descriptors of runner's that become
// them, or k_kept_stream for runner's own.
constexpr int k_kept_stream = -1;
struct ChildStreams {
  int input = k_kept_stream;
  int output = k_kept_stream;
  int error = k_kept_stream;
};

// Starts `path` with `argv` (null-terminated) and `environment`
// (null-terminated; nullptr: runner's own). Returns once it runs `path` or
// could not: sets `pid` and returns 0, or returns the error number.
[[nodiscard]] int spawn_in_own_group(pid_t& pid, const char* path, const char* const argv[],
                                     const ChildStreams& streams,
                                     const char* const environment[] = nullptr);

// The full path of `program` on PATH; `program` itself when not found
// (spawning it then says so).
std::string program_on_path(const std::string& program);

}  // namespace runner
