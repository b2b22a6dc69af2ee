// The launcher: one long-lived remote shell per SSH channel that starts jobs
// one after another, so that a job costs a fork and two small program starts
// on the host instead of a new session, a login shell and three programs.
// This file holds the protocol only: the shell text sent to the host and the
// scanner that finds where a job's output ends. Pure.
//
// A launcher channel runs launcher_command(). Each job is one line written to
// its stdin (launcher_job_line): the job runs in the foreground as
// `setsid sh -c '<wrapper>' </dev/null` (its own session and process group,
// stdin empty), the wrapper prints "runner-pgid <pid>" (see shell.h), and
// after it ends the launcher prints "<token> <status>\n" on stdout and
// "<token>\n" on stderr. The job's output is everything on each stream
// before its marker.
//
// A job ends when its shell exits. Processes it left in its group may still
// write to the launcher's output, which would mix into the next job's: so a
// job line first checks that the previous job's group is empty, and if not
// answers "<token> busy" without running anything; that launcher is then
// retired (its stdin closed) and the job goes to a fresh one.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace runner {

// The exit status of a launcher on a host without `setsid`: jobs there run
// one channel each instead.
constexpr int k_launcher_unavailable = 97;

// The marker's word when the previous job's process group still has members.
constexpr std::string_view k_launcher_busy = "busy";

// The command the launcher channel runs: checks for `setsid`, then reads
// job lines from stdin until EOF.
std::string launcher_command();

// The line that runs `command` as a job, ending in the markers.
// `previous_group`: the process group of the job before on this launcher
// (0: none), which must be empty for this one to run.
std::string launcher_job_line(std::string_view command, std::string_view token,
                              long previous_group);

// The line that runs `shell_command` directly in the launcher (a signal to
// a job's group), ending in the markers.
std::string launcher_control_line(std::string_view shell_command, std::string_view token);

// Splits one stream of a launcher channel into the current job's bytes and
// the marker that ends them. A marker may arrive split across reads, and
// bytes that could start one are held back until it is clear.
class EndMarkerScanner {
 public:
  explicit EndMarkerScanner(std::string token);

  // Passes the job's part of `bytes` to `emit` (zero or more calls). Returns
  // true once the marker has been read whole; what follows it belongs to no
  // job and is dropped until reset().
  bool feed(std::string_view bytes, const std::function<void(std::string_view)>& emit);
  bool ended() const { return m_ended; }
  const std::string& token() const { return m_token; }
  // What followed the token on its line ("3" of "<token> 3"; empty on stderr).
  const std::string& word() const { return m_word; }
  // word() as an exit status, if it is a number.
  std::optional<int> status() const;
  // Ready for the next job's output.
  void reset();

 private:
  bool finish_marker();

  std::string m_token;
  std::string m_held;  // undecided bytes: a possible marker start, or the marker's line
  bool m_in_marker = false;
  bool m_ended = false;
  std::string m_word;
};

}  // namespace runner
