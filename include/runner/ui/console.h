// The terminal side of a run. Job output goes to one stream (stdout), each
// line prefixed with its slot ("[node01 gpu=0] ..."), the label coloured per
// slot on a TTY; runner messages go to another (stderr) as "runner: ...".
//
// Every line reaches the file descriptor whole: job lines are gathered in a
// buffer that is written only at line ends (on a TTY after every job_output
// call, otherwise when it grows large or on flush()), and each message is
// one write(). Call flush() whenever the event loop is about to wait.
//
// Threading: none; one Console per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <unordered_map>

#include "runner/core/job_exit.h"
#include "runner/ui/line_splitter.h"

namespace runner {

// `--color auto|always|never`.
enum class ColorMode { automatic, always, never };

// Whether text written to `fd` gets ANSI colours. `always` and `never` decide
// outright; `automatic` colours only a TTY, and only when NO_COLOR is unset
// or empty and TERM is not "dumb".
bool color_enabled(ColorMode mode, int fd);

// The SGR parameters ("36", "1;32", ...) of the label colour of slot `slot`:
// eight hues, then the same hues in bold, repeating.
std::string slot_color(int slot);

// Writes all of `bytes` to `fd`, retrying after EINTR, short writes and
// EAGAIN. False when the descriptor fails (e.g. EPIPE).
bool write_all(int fd, std::string_view bytes);

// Prints job output and runner messages.
class Console {
 public:
  // out_fd receives job lines, err_fd runner messages. print_period N
  // prints lines N, 2N, 3N, ... of each stream (stdout, stderr) of a job,
  // as Pegasus does; 0 prints none.
  Console(int out_fd, int err_fd, ColorMode color = ColorMode::automatic,
          std::size_t print_period = 1);
  // Same, for stdio streams (flushed first, then written through their fds).
  Console(std::FILE* out, std::FILE* err, ColorMode color = ColorMode::automatic,
          std::size_t print_period = 1);
  ~Console();
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

  // Bytes a job wrote to its stdout or stderr; both become job lines. `slot`
  // picks the label colour; `label` ("node01 gpu=0") is taken from the
  // job's first call.
  void job_output(JobId job, int slot, std::string_view label, OutputStream stream,
                  std::string_view bytes);
  // The job ended: prints its unterminated last lines and forgets it.
  void job_finished(JobId job);
  // A line about a job among its lines, with its prefix ("[label] <text>"):
  // not the job's output, so printed whatever the print period.
  void job_note(JobId job, int slot, std::string_view label, std::string_view text);

  // "runner: <message>"
  void info(std::string_view message);
  // "runner: warning: <message>"
  void warn(std::string_view message);
  // "runner: error: <message>"
  void error(std::string_view message);
  // Writes `text` to the message stream as it is (e.g. the end-of-run summary).
  void write_block(std::string_view text);

  // Writes buffered job lines out.
  void flush();

  bool colors_output() const { return m_color_out; }
  bool colors_messages() const { return m_color_err; }

  // The status line (status_line.h): one line kept below everything else on
  // the terminal, on stdout when it is a terminal, else on stderr when that
  // is one. Off until enable_status(), which returns false (and leaves it
  // off) when neither is a terminal or TERM is "dumb". While it shows, job
  // lines and messages erase it and draw it again after themselves, in the
  // same write when they go to its descriptor.
  bool enable_status();
  bool status_enabled() const { return m_status_fd >= 0; }
  // Shows `line`: no line break, narrower than status_width().
  void show_status(std::string_view line);
  // Erases the line until the next show_status (a prompt needs the line).
  void hide_status();
  // Erases the line and turns the status line off.
  void clear_status();
  // Columns of the status line's terminal; 80 when unknown.
  std::size_t status_width() const;
  bool colors_status() const { return m_status_fd == m_out_fd ? m_color_out : m_color_err; }

 private:
  // One of a job's output streams: its partial line and how many lines it
  // gave.
  struct StreamState {
    LineSplitter splitter;
    std::uint64_t lines = 0;
  };

  struct JobState {
    std::string prefix;  // "[label] ", with colour codes when colouring
    std::size_t prefix_columns = 0;
    StreamState out;
    StreamState err;
  };

  // "[label] ", with colour codes when colouring.
  std::string job_prefix(int slot, std::string_view label) const;
  JobState& job_state(JobId job, int slot, std::string_view label);
  void add_line(const JobState& job, StreamState& stream, std::string_view line);
  // Reads the width of the terminal job lines go to (0: not one), once per
  // batch of lines.
  void measure_terminal();
  // `prefix` (`prefix_columns` wide) and `line` into the buffer, cut to the
  // terminal's width when job lines go to one.
  void append_job_line(std::string_view prefix, std::size_t prefix_columns, std::string_view line);
  void message(std::string_view kind, std::string_view sgr, std::string_view text);
  // Writes `text` to the message stream around a status line that shows.
  void write_message(std::string_view text);

  int m_out_fd;
  int m_err_fd;
  std::size_t m_period;
  bool m_color_out;
  bool m_color_err;
  bool m_out_tty;
  std::size_t m_out_columns = 0;  // of the terminal job lines go to; 0: none
  bool m_out_failed = false;
  std::string m_buffer;
  std::unordered_map<JobId, JobState> m_jobs;
  int m_status_fd = -1;
  std::string m_status;
  bool m_status_shown = false;
};

}  // namespace runner
