// The `docker` function of a job's shell (see runner/exec/docker_exec.h). Pure.
#include "runner/exec/docker_exec.h"

#include "runner/exec/shell.h"

namespace runner {

namespace {

// Run in the container by `sh -c`, $0 the pid file: stops the group of the
// pid it holds, unless its command ended (and removed the file). `live`
// tells whether the group has a process that is not a zombie (a container
// whose first process is not an init, `sleep infinity`, never reaps its
// orphans), from /proc with builtins only.
constexpr std::string_view k_stop_in_container =
    "read -r p <\"$0\" 2>/dev/null || exit 0; rm -f \"$0\"; "
    "live() { for f in /proc/[0-9]*/stat; do read -r s <\"$f\" 2>/dev/null || continue; "
    "set -- ${s##*) }; [ \"$1\" != Z ] && [ \"$3\" = \"$p\" ] && return 0; done; return 1; }; "
    "kill -s TERM -- \"-$p\" 2>/dev/null || exit 0; i=0; "
    "while live && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; "
    "! live || kill -s KILL -- \"-$p\" 2>/dev/null; true";

// Runs the command in the container with its pid in the file $0, removed
// when the command ends.
constexpr std::string_view k_run_in_container =
    "echo $$ >\"$0\"; \"$@\"; s=$?; rm -f \"$0\"; exit $s";

// Run on the host by `sh -c` with the container ($1) and the pid file ($2).
std::string stop_command() {
  return "command docker exec \"$1\" sh -c " + shell_quote(k_stop_in_container) + " \"$2\"";
}

}  // namespace

bool mentions_docker(std::string_view command) {
  return command.find("docker") != std::string_view::npos;
}

std::string docker_exec_prelude(std::string_view command) {
  if (!mentions_docker(command)) return {};
  const std::string stop = stop_command();
  // The watcher: $1 the shell that runs the client, then the stop's $1, $2.
  const std::string watch = "while kill -0 \"$1\" 2>/dev/null; do sleep 1; done; shift; " + stop;
  // The arguments after `exec` are rotated through "$@" once, the pid
  // file's wrapper put in after the container's name. One line: a
  // launcher reads a job's command as one.
  return "docker() { "
         "[ \"$1\" = exec ] || { command docker \"$@\"; return; }; shift; "
         "_runner_left=$# _runner_value= _runner_detach= _runner_container= _runner_file=; "
         "while [ \"$_runner_left\" -gt 0 ]; do "
         "_runner_arg=$1; shift; _runner_left=$((_runner_left - 1)); set -- \"$@\" "
         "\"$_runner_arg\"; "
         "if [ -n \"$_runner_container\" ]; then continue; fi; "
         "if [ -n \"$_runner_value\" ]; then _runner_value=; continue; fi; "
         "case $_runner_arg in "
         "--detach | --detach=true) _runner_detach=1 ;; "
         "--env | --env-file | --user | --workdir | --detach-keys) _runner_value=1 ;; "
         "--*) ;; "
         "-?*) _runner_flags=${_runner_arg#-}; while [ -n \"$_runner_flags\" ]; do "
         "case $_runner_flags in d*) _runner_detach=1 ;; [euw]) _runner_value=1 ;; "
         "[euw]*) break ;; esac; _runner_flags=${_runner_flags#?}; done ;; "
         "*) _runner_container=$_runner_arg; "
         "[ -n \"$_runner_detach\" ] || ! command -v setsid >/dev/null 2>&1 || { "
         "_runner_count=$((${_runner_count:-0} + 1)); "
         "_runner_file=/tmp/runner-exec-$$-$_runner_count.pid; "
         "set -- \"$@\" sh -c " +
         shell_quote(k_run_in_container) +
         " \"$_runner_file\"; } ;; "
         "esac; done; "
         "set -- exec \"$@\"; "
         "[ -n \"$_runner_file\" ] || { command docker \"$@\"; return; }; "
         // The shell that runs this (a subshell in a pipeline has a pid of its own).
         "_runner_shell=$$; read -r _runner_shell _ </proc/self/stat 2>/dev/null; "
         "setsid sh -c " +
         shell_quote(watch) +
         " sh \"$_runner_shell\" \"$_runner_container\" \"$_runner_file\" "
         "</dev/null >/dev/null 2>&1 3>&- 4>&- & "
         "_runner_watcher=$!; "
         "command docker \"$@\"; "
         "set -- $? \"$_runner_container\" \"$_runner_file\"; "
         "kill \"$_runner_watcher\" 2>/dev/null; "
         "[ \"$1\" -le 128 ] || sh -c " +
         shell_quote(stop) +
         " sh \"$2\" \"$3\" </dev/null >/dev/null 2>&1; "
         "return \"$1\"; }; ";
}

std::string with_docker_exec_stop(std::string_view command) {
  if (!mentions_docker(command)) return std::string(command);
  return evaluated(command);
}

}  // namespace runner
