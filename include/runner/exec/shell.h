// The wrapper that runs a job in its own process group and reports that
// group's id, and the commands that signal it (shell_quote is core's). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/core/process_group.h"
#include "runner/core/shell_quote.h"

namespace runner {

// `command` as a job's `sh` runs it: evaluated exactly as `sh -c '<command>'`
// would, after the definitions that stop its `docker exec`s with it (see
// docker_exec.h).
std::string evaluated(std::string_view command);

// The script that runs a job in a fresh `sh`: prints "runner-pgid <pid>\n"
// on stdout (the shell is made a session and group leader, so its pid is the
// group id), then runs evaluated(command).
std::string job_wrapper(std::string_view command);

// `command` preceded by writing `files` (path, content; the command is not
// run when one cannot be written, and sh says why on stderr) and exporting
// `environment`: as `sh -c` runs it, the same as start_task's command.
// Each file is written beside its path and renamed onto it, so a task that
// reads it never sees it half written, though other tasks (ranks on one
// host, or on a shared file system) write the same path meanwhile;
// `writer` (a task id) keeps their temporary names apart.
std::string set_up_command(const std::vector<std::pair<std::string, std::string>>& environment,
                           const std::vector<std::pair<std::string, std::string>>& files,
                           std::string_view command, std::string_view writer);

// Parses the first stdout line the wrapper prints ("runner-pgid 123").
std::optional<long> parse_pgid_line(std::string_view line);

// The sh command that sends `signal` to process group `pgid` on a host. It
// succeeds when the signal went out or the group is gone (its job ended
// meanwhile): its failure means that a group that lives did not get it.
std::string kill_group_command(long pgid, int signal);

// The sh command that sends SIGKILL to those of `groups` that still exist
// and are still the job's: some process of the group carries its mark in
// its environment (a group recorded without a mark is taken as the job's).
// For each group that exists it prints "killed <id>", or "kept <id>" for
// one that is not the job's any more (or cannot be told so: no /proc).
std::string kill_leftovers_command(const std::vector<ProcessGroup>& groups);

// The signal's name without "SIG" ("TERM" for SIGTERM), as SSH reports
// exit signals; the decimal number for a signal without a portable name.
std::string signal_name(int signal);

}  // namespace runner
