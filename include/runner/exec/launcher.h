// What a host's shell is told, and how its answers are read: the protocol
// of every channel that runs something on a host. Pure.
//
// The login shell, whatever it is (bash, tcsh, zsh, fish), only ever runs
// k_login_command: a POSIX sh that reads its script from the channel's
// stdin. Everything else travels there. The script first prints a ready
// marker, "<token> ready", on stdout and stderr: what comes before it is
// the login shell's start-up output (a .bashrc banner), no job's.
//
// A launcher channel (launcher_script) then reads one line per job
// (launcher_job_line): the job runs in the foreground as
// `RUNNER_JOB_MARK=<mark> setsid sh -c '<wrapper>' </dev/null` (its own
// session and process group, stdin empty, the job's mark in the environment
// of each of its processes: see process_group.h), the wrapper prints
// "runner-pgid <pid>" (see shell.h), and after it ends the launcher prints
// "<token> <status>\n" on stdout and "<token>\n" on stderr. The job's
// output is everything on each stream before its marker. The job's shell,
// when it exits with a status above 128 (and not when a signal kills it),
// leaves "<token> exited" on the launcher's stdout: such
// a status without that note is a death by signal status - 128. The
// launcher's own messages (dash's "Segmentation fault") go to /dev/null,
// not to the job's stderr.
//
// A job ends when its shell exits. Processes it left behind may still
// write to the launcher's output, which would mix into the next job's. So,
// where /proc shows it (Linux), the launcher looks, when the job ends, for
// a process started since the job began whose stdout or stderr is still the
// launcher's (one that left the job's session with `setsid` too), and if
// there is one leaves "<token> held" on stdout before the end marker: that
// launcher is then retired (its stdin closed; what comes later is dropped).
// And a job line first checks that the previous job's group is empty, and
// if not answers "<token> busy" without running anything; that launcher is
// retired too and the job goes to a fresh one.
//
// A job that reads an input (a file of runner's, sent as its stdin) has a
// channel of its own too (input_channel_script).
//
// Where `setsid` is missing, each job has a channel of its own whose sh
// becomes the wrapper with the mark exported (job_channel_script; sshd made
// it a session leader, and reports its exit status or signal). A signal for a job goes
// to an idle launcher as a control line, or on a channel of its own
// (control_channel_script); both end in "<token> <status>", and a status
// other than 0 means the signal did not reach a group that still exists.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace runner {

// The one command a login shell is given, on every channel: single-line
// ASCII that bash, tcsh, zsh and fish all read alike.
inline constexpr std::string_view k_login_command = "exec sh -s";

// The exit status of a launcher on a host without `setsid`: jobs there run
// one channel each instead.
constexpr int k_launcher_unavailable = 97;

// The marker's word that ends the login shell's start-up output.
constexpr std::string_view k_ready_word = "ready";

// The marker's word when the previous job's process group still has members.
constexpr std::string_view k_launcher_busy = "busy";

// The note's word a job's shell leaves when it exits.
constexpr std::string_view k_exited_word = "exited";

// The note's word when a process the job started still holds its output.
constexpr std::string_view k_held_word = "held";

// A launcher's script, first on its stdin: checks for `setsid`, keeps its
// stdout and stderr for jobs and markers, and prints the ready marker.
std::string launcher_script(std::string_view token);

// The line that runs `command` as a job, ending in the markers.
// `previous_group`: the process group of the job before on this launcher
// (0: none), which must be empty for this one to run.
// `mark`: the job's mark (process_group.h).
std::string launcher_job_line(std::string_view command, std::string_view token, long previous_group,
                              std::string_view mark);

// The line that runs `control` (an sh command: a signal to a job's group)
// in the launcher, ending in the markers; its stderr is the control's.
std::string launcher_control_line(std::string_view control, std::string_view token);

// The whole stdin of a channel that runs one job where there is no
// `setsid`: the ready marker, then the job's wrapper, stdin empty.
std::string job_channel_script(std::string_view command, std::string_view token,
                               std::string_view mark);

// The start of the stdin of a channel whose job reads the rest of it: the
// ready marker, then the job's wrapper, its stdin the channel's. What
// follows (the job's input) must be sent only once the wrapper's
// "runner-pgid" line came back: sh may read ahead of the line it runs.
std::string input_channel_script(std::string_view command, std::string_view token,
                                 std::string_view mark);

// The whole stdin of a channel that runs `control` alone: the ready
// marker, then the control, ending in the markers.
std::string control_channel_script(std::string_view control, std::string_view token);

// Splits one stream of a channel into the current work's bytes and the
// marker that ends them. A marker may arrive split across reads, and
// bytes that could start one are held back until it is clear. An "exited"
// or "held" note is taken out of the stream and remembered.
class EndMarkerScanner {
 public:
  explicit EndMarkerScanner(std::string token);

  // Passes the work's part of `bytes` to `emit` (zero or more calls).
  // Returns true once the marker has been read whole; what followed it in
  // the same bytes is take_rest()'s, and later bytes are dropped until reset().
  bool feed(std::string_view bytes, const std::function<void(std::string_view)>& emit);
  bool ended() const { return m_ended; }
  const std::string& token() const { return m_token; }
  // What followed the token on its line ("3" of "<token> 3"; empty on stderr).
  const std::string& word() const { return m_word; }
  // word() as an exit status, if it is a number.
  std::optional<int> status() const;
  // Whether the job's shell left its "exited" note before the marker.
  bool exited_note() const { return m_exited_note; }
  // Whether the launcher said a process the job started holds its output.
  bool held_note() const { return m_held_note; }
  // The bytes that followed the marker's line in the feed that ended it.
  std::string take_rest();
  // Ready for the next work's output.
  void reset();

 private:
  bool finish_marker(const std::function<void(std::string_view)>& emit);

  std::string m_token;
  std::string m_held;  // undecided bytes: a possible marker start, or the marker's line
  bool m_in_marker = false;
  bool m_ended = false;
  bool m_exited_note = false;
  bool m_held_note = false;
  std::string m_word;
  std::string m_rest;
};

}  // namespace runner
