// The job wrapper and the group signal (see runner/exec/shell.h). Pure.
#include "runner/exec/shell.h"

#include <fmt/format.h>

#include <csignal>
#include <string>

#include "runner/exec/docker_exec.h"

namespace runner {

namespace {

constexpr std::string_view k_pgid_prefix = "runner-pgid ";

struct SignalName {
  int number;
  const char* name;
};

constexpr SignalName k_signal_names[] = {
    {SIGHUP, "HUP"},       {SIGINT, "INT"},   {SIGQUIT, "QUIT"},   {SIGILL, "ILL"},
    {SIGTRAP, "TRAP"},     {SIGABRT, "ABRT"}, {SIGBUS, "BUS"},     {SIGFPE, "FPE"},
    {SIGKILL, "KILL"},     {SIGUSR1, "USR1"}, {SIGSEGV, "SEGV"},   {SIGUSR2, "USR2"},
    {SIGPIPE, "PIPE"},     {SIGALRM, "ALRM"}, {SIGTERM, "TERM"},   {SIGCHLD, "CHLD"},
    {SIGCONT, "CONT"},     {SIGSTOP, "STOP"}, {SIGTSTP, "TSTP"},   {SIGTTIN, "TTIN"},
    {SIGTTOU, "TTOU"},     {SIGURG, "URG"},   {SIGXCPU, "XCPU"},   {SIGXFSZ, "XFSZ"},
    {SIGVTALRM, "VTALRM"}, {SIGPROF, "PROF"}, {SIGWINCH, "WINCH"}, {SIGSYS, "SYS"},
};

}  // namespace

std::string evaluated(std::string_view command) {
  // The leading space keeps a command that starts with '-' from being read
  // as an option of `eval` (bash as sh has options there; dash has none).
  std::string spaced = " ";
  spaced += command;
  return docker_exec_prelude(command) + "eval " + shell_quote(spaced);
}

std::string job_wrapper(std::string_view command) {
  return "echo \"runner-pgid $$\"; " + evaluated(command);
}

std::string set_up_command(const std::vector<std::pair<std::string, std::string>>& environment,
                           const std::vector<std::pair<std::string, std::string>>& files,
                           std::string_view command, std::string_view writer) {
  std::string script;
  for (const auto& [path, content] : files) {
    std::string temporary = shell_quote(path + ".runner-" + std::string(writer) + ".tmp");
    script += "printf '%s' " + shell_quote(content) + " > " + temporary + " && mv -f " + temporary +
              " " + shell_quote(path) + " || { rm -f " + temporary + "; exit 1; }\n";
  }
  for (const auto& [name, value] : environment)
    script += "export " + name + "=" + shell_quote(value) + "\n";
  script += command;
  return script;
}

std::optional<long> parse_pgid_line(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (line.substr(0, k_pgid_prefix.size()) != k_pgid_prefix) return std::nullopt;
  std::string_view digits = line.substr(k_pgid_prefix.size());
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  long value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value <= 0) return std::nullopt;
  return value;
}

std::string kill_group_command(long pgid, int signal) {
  // `kill -s NAME -- -PGID` is understood by dash, bash and zsh alike, with
  // a name or a number.
  std::string group = "-" + std::to_string(pgid);
  return "kill -s " + signal_name(signal) + " -- " + group + " || ! kill -s 0 -- " + group +
         " 2>/dev/null";
}

std::string kill_leftovers_command(const std::vector<ProcessGroup>& groups) {
  // ours GROUP MARK: some process of GROUP has MARK in its environment. A
  // process's stat is "pid (comm) state ppid pgrp ..."; comm may hold
  // spaces and parentheses, so the fields are counted after its last ") ".
  std::string command = fmt::format(
      "ours() {{\n"
      "  group=$1 mark={}=$2\n"
      "  for dir in /proc/[0-9]*; do\n"
      "    {{ read -r stat <\"$dir/stat\"; }} 2>/dev/null || continue\n"
      "    set -- ${{stat##*) }}\n"
      "    [ \"${{3-}}\" = \"$group\" ] || continue\n"
      "    tr '\\000' '\\n' <\"$dir/environ\" 2>/dev/null | grep -qxF \"$mark\" && return 0\n"
      "  done\n"
      "  return 1\n"
      "}}\n",
      k_job_mark_variable);
  // `kill -s 0 --`: dash takes no `--` after `-0`.
  for (const ProcessGroup& group : groups) {
    std::string check =
        group.mark.empty() ? "true" : fmt::format("ours {} {}", group.id, shell_quote(group.mark));
    command += fmt::format(
        "if kill -s 0 -- -{0} 2>/dev/null; then\n"
        "  if {1}; then kill -s KILL -- -{0}; echo killed {0}; else echo kept {0}; fi\n"
        "fi\n",
        group.id, check);
  }
  return command + "true";
}

std::string signal_name(int signal) {
  for (const SignalName& entry : k_signal_names) {
    if (entry.number == signal) return entry.name;
  }
  return std::to_string(signal);
}

}  // namespace runner
