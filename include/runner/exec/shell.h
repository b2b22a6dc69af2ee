// Shell quoting and the wrapper that runs a job in its own process group and
// reports that group's id. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace runner {

// `text` as one POSIX shell word: single-quoted, each ' written as '\''.
std::string shell_quote(std::string_view text);

// The script that runs a job in a fresh `sh -c`: prints "runner-pgid <pid>\n"
// on stdout (the shell is made a session and group leader, so its pid is the
// group id), then evaluates `command` exactly as `sh -c '<command>'` would.
std::string job_wrapper(std::string_view command);

// What is sent over SSH to run a job on a channel of its own: the remote
// login shell execs `sh -c '<job_wrapper>'` (sshd makes it a session leader).
std::string remote_job_command(std::string_view command);

// Parses the first stdout line the wrapper prints ("runner-pgid 123").
std::optional<long> parse_pgid_line(std::string_view line);

// The command that sends `signal` to process group `pgid` on a host.
std::string kill_group_command(long pgid, int signal);

// The signal's name without "SIG" ("TERM" for SIGTERM), as SSH reports
// exit signals; the decimal number for a signal without a portable name.
std::string signal_name(int signal);

}  // namespace runner
