// Console: prefixed, optionally coloured job lines and runner messages,
// written whole-line with retries on EINTR and short writes.
#include "runner/ui/console.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "runner/ui/line_wrap.h"

namespace runner {

namespace {

// Buffered job output is written once it reaches this size (not on a TTY).
constexpr std::size_t k_flush_threshold = 64 * 1024;

// Distinct on dark and light backgrounds; red is left for errors.
constexpr std::array<std::string_view, 8> k_palette = {"36", "32", "33", "35",
                                                       "34", "96", "92", "95"};

constexpr std::string_view k_reset = "\x1b[0m";

// Back to the start of the line and erase it: removes the status line.
constexpr std::string_view k_erase_line = "\r\x1b[K";

}  // namespace

bool color_enabled(ColorMode mode, int fd) {
  if (mode == ColorMode::always) return true;
  if (mode == ColorMode::never) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd) == 1;
}

std::string slot_color(int slot) {
  if (slot < 0) slot = 0;
  std::string hue(k_palette[slot % k_palette.size()]);
  bool bold = (slot / k_palette.size()) % 2 == 1;
  return bold ? "1;" + hue : hue;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd, POLLOUT, 0};
      if (::poll(&pfd, 1, -1) < 0 && errno != EINTR) return false;
    } else {
      return false;
    }
  }
  return true;
}

Console::Console(int out_fd, int err_fd, ColorMode color, std::size_t print_period)
    : m_out_fd(out_fd),
      m_err_fd(err_fd),
      m_period(print_period),
      m_color_out(color_enabled(color, out_fd)),
      m_color_err(color_enabled(color, err_fd)),
      m_out_tty(isatty(out_fd) == 1) {}

Console::Console(std::FILE* out, std::FILE* err, ColorMode color, std::size_t print_period)
    : Console((std::fflush(out), fileno(out)), (std::fflush(err), fileno(err)), color,
              print_period) {}

Console::~Console() {
  flush();
  clear_status();
}

std::string Console::job_prefix(int slot, std::string_view label) const {
  std::string prefix;
  if (m_color_out) {
    prefix.append("\x1b[").append(slot_color(slot)).append("m[");
    prefix.append(label).append("]").append(k_reset).append(" ");
  } else {
    prefix.append("[").append(label).append("] ");
  }
  return prefix;
}

Console::JobState& Console::job_state(JobId job, int slot, std::string_view label) {
  auto [it, inserted] = m_jobs.try_emplace(job);
  if (inserted) {
    it->second.prefix = job_prefix(slot, label);
    it->second.prefix_columns = display_columns(it->second.prefix);
  }
  return it->second;
}

void Console::measure_terminal() {
  winsize size{};
  m_out_columns = m_out_tty && ::ioctl(m_out_fd, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

void Console::append_job_line(std::string_view prefix, std::size_t prefix_columns,
                              std::string_view line) {
  // On a terminal, a line wider than it is cut into pieces that each carry
  // the prefix; a terminal too narrow for that gets lines whole.
  std::size_t columns = m_out_columns > prefix_columns + 10 ? m_out_columns - prefix_columns : 0;
  for (std::string_view piece : wrap_line(line, columns)) {
    m_buffer.append(prefix);
    m_buffer.append(piece);
    m_buffer.push_back('\n');
  }
  if (m_buffer.size() >= k_flush_threshold) flush();
}

void Console::add_line(const JobState& job, StreamState& stream, std::string_view line) {
  if (++stream.lines % m_period != 0) return;
  append_job_line(job.prefix, job.prefix_columns, line);
}

void Console::job_output(JobId job, int slot, std::string_view label, OutputStream stream,
                         std::string_view bytes) {
  if (m_period == 0) return;
  measure_terminal();
  JobState& state = job_state(job, slot, label);
  StreamState& lines = stream == OutputStream::out ? state.out : state.err;
  lines.splitter.feed(bytes, [&](std::string_view line) { add_line(state, lines, line); });
  if (m_out_tty) flush();
}

void Console::job_finished(JobId job) {
  auto it = m_jobs.find(job);
  if (it == m_jobs.end()) return;
  measure_terminal();
  JobState& state = it->second;
  for (StreamState* stream : {&state.out, &state.err})
    stream->splitter.finish([&](std::string_view line) { add_line(state, *stream, line); });
  m_jobs.erase(it);
  if (m_out_tty) flush();
}

void Console::job_note(JobId job, int slot, std::string_view label, std::string_view text) {
  measure_terminal();
  if (auto it = m_jobs.find(job); it != m_jobs.end()) {
    append_job_line(it->second.prefix, it->second.prefix_columns, text);
  } else {
    std::string prefix = job_prefix(slot, label);
    append_job_line(prefix, display_columns(prefix), text);
  }
  if (m_out_tty) flush();
}

void Console::message(std::string_view kind, std::string_view sgr, std::string_view text) {
  flush();
  std::string line = "runner: ";
  if (!kind.empty()) {
    if (m_color_err) {
      line.append("\x1b[").append(sgr).append("m").append(kind).append(k_reset);
    } else {
      line.append(kind);
    }
    line.push_back(' ');
  }
  line.append(text);
  line.push_back('\n');
  write_message(line);
}

void Console::write_message(std::string_view text) {
  if (!m_status_shown) {
    write_all(m_err_fd, text);
    return;
  }
  if (m_status_fd == m_err_fd) {
    std::string framed;
    framed.reserve(k_erase_line.size() + text.size() + m_status.size());
    framed.append(k_erase_line).append(text).append(m_status);
    write_all(m_err_fd, framed);
    return;
  }
  write_all(m_status_fd, k_erase_line);
  write_all(m_err_fd, text);
  write_all(m_status_fd, m_status);
}

void Console::info(std::string_view message_text) { message("", "", message_text); }

void Console::warn(std::string_view message_text) { message("warning:", "1;33", message_text); }

void Console::error(std::string_view message_text) { message("error:", "1;31", message_text); }

void Console::write_block(std::string_view text) {
  flush();
  write_message(text);
}

void Console::flush() {
  if (m_buffer.empty()) return;
  // Once the output is gone (a closed pipe), drop job lines instead of
  // retrying every flush.
  if (!m_out_failed) {
    bool ok = true;
    if (m_status_shown && m_status_fd == m_out_fd) {
      // One write: erase the status line, the job lines, the status line.
      std::string framed;
      framed.reserve(k_erase_line.size() + m_buffer.size() + m_status.size());
      framed.append(k_erase_line).append(m_buffer).append(m_status);
      ok = write_all(m_out_fd, framed);
    } else {
      ok = write_all(m_out_fd, m_buffer);
    }
    if (!ok) m_out_failed = true;
  }
  m_buffer.clear();
}

bool Console::enable_status() {
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  if (isatty(m_out_fd) == 1) {
    m_status_fd = m_out_fd;
  } else if (isatty(m_err_fd) == 1) {
    m_status_fd = m_err_fd;
  }
  return m_status_fd >= 0;
}

void Console::show_status(std::string_view line) {
  if (m_status_fd < 0 || (m_status_shown && line == m_status)) return;
  m_status.assign(line);
  std::string framed;
  framed.reserve(k_erase_line.size() + m_status.size());
  framed.append(k_erase_line).append(m_status);
  write_all(m_status_fd, framed);
  m_status_shown = true;
}

void Console::hide_status() {
  if (m_status_shown) write_all(m_status_fd, k_erase_line);
  m_status_shown = false;
  m_status.clear();
}

void Console::clear_status() {
  hide_status();
  m_status_fd = -1;
}

std::size_t Console::status_width() const {
  winsize size{};
  if (m_status_fd >= 0 && ::ioctl(m_status_fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  return 80;
}

}  // namespace runner
