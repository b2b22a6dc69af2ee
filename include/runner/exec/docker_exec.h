// Stopping what a job's `docker exec` runs inside its container together
// with the job. Pure.
//
// Killing a `docker exec` client leaves its process in the container
// running: the engine does not pass the client's end on. So a job's shell,
// when the job's command mentions docker, first defines a shell function
// `docker` that wraps each `docker exec [OPTIONS] CONTAINER COMMAND...`
// (not `-d`) written in the command itself:
//  - COMMAND runs in the container under a `sh -c` that writes its pid to
//    FILE (/tmp/runner-exec-<job shell pid>-<n>.pid in the container) and
//    removes it when COMMAND ends: the engine makes each exec's process a
//    session and group leader, so that pid is COMMAND's process group;
//  - a watcher, in a session of its own on the host (`setsid`), polls once a
//    second whether the shell that ran the client still lives; when that
//    shell dies (a timeout, runner's stop of a job, a lost host's cleanup or
//    --resume killing the job's process group), the watcher stops the
//    container's group, unless FILE is gone: `kill -s TERM -- -PID`, SIGKILL
//    five seconds later if the group is not empty by then;
//  - when the client ends, the shell ends the watcher, and if the client
//    itself was killed by a signal (status above 128), the shell stops the
//    container's group the same way.
// Other docker commands, `docker` with options before `exec`, and docker
// run by a script the job starts are left as they are (`cancel:` reaches
// those), and so is every docker exec on a host without `setsid`;
// `command docker exec` skips the function. The container needs a `sh`.
#pragma once

#include <string>
#include <string_view>

namespace runner {

// Whether `command` mentions docker: only then does its shell get the function.
bool mentions_docker(std::string_view command);

// The definition of the `docker` function, one line ending in "; ", when `command`
// mentions docker; otherwise nothing.
std::string docker_exec_prelude(std::string_view command);

// `command` as a local job's `sh -c` is given it: as it is when it does not
// mention docker (so that sh's messages about it read as from `sh -c`),
// otherwise evaluated (see shell.h) after the prelude.
std::string with_docker_exec_stop(std::string_view command);

}  // namespace runner
