// Running the real `runner` binary (or any program) from a test: with
// arguments, environment and working directory, capturing stdout, stderr
// and the exit status, always within a time limit.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace runner::testing {

struct ProcessResult {
  int status = -1;  // exit status; 128 + signal when killed
  std::string out;
  std::string err;
  bool timed_out = false;
};

struct ProcessSpec {
  std::vector<std::string> args;           // args[0] is the program path
  std::string cwd;                         // empty: inherit
  std::map<std::string, std::string> env;  // set (or, with empty value, unset) on top of ours
  std::string input;                       // written to stdin, then closed
  std::chrono::milliseconds timeout{60000};
};

// A started process. Destroying it kills the process group it leads.
class Process {
 public:
  explicit Process(const ProcessSpec& spec);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return m_pid; }
  void signal(int signal);
  // Reads output until it exits (or the spec's timeout, then SIGKILL).
  ProcessResult wait();
  // Output gathered so far without waiting for the end (reads what is there).
  std::string peek_out();
  std::string peek_err();
  // Waits until stdout (or stderr) contains `text`; false on timeout.
  bool wait_for_output(const std::string& text, std::chrono::milliseconds timeout);

 private:
  void pump(int timeout_ms);
  pid_t m_pid = -1;
  int m_out = -1, m_err = -1;
  ProcessResult m_result;
  std::chrono::steady_clock::time_point m_deadline;
  bool m_done = false;
};

// A forked child of the test that does nothing and lives until this object
// goes away: a live pid (e.g. one holding a lock).
class LiveProcess {
 public:
  LiveProcess();
  ~LiveProcess();
  LiveProcess(const LiveProcess&) = delete;
  LiveProcess& operator=(const LiveProcess&) = delete;
  pid_t pid() const { return m_pid; }

 private:
  pid_t m_pid = -1;
  int m_pipe = -1;  // the child exits when this closes
};

// Starts and waits.
ProcessResult run_process(const ProcessSpec& spec);

// What `/bin/sh -c -- command` prints on stdout, its stdin empty.
std::string sh_output(const std::string& command);

// `runner` with `args`, in `cwd`, with NO_COLOR set and no ssh-agent.
ProcessSpec runner_spec(std::vector<std::string> args, const std::string& cwd);

// Processes (not zombies) whose process group is `pgid`.
int live_group_members(long pgid);

// Processes (not zombies) whose whole command line, arguments joined by
// spaces, is `command_line` (e.g. "sleep 31.25").
int live_processes_running(const std::string& command_line);

// The pids of live processes whose command line starts with
// `command_line_start` (arguments joined by spaces).
std::vector<long> live_processes_starting(const std::string& command_line_start);

}  // namespace runner::testing
