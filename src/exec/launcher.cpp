// The text of the channel protocol and its end-marker scanner (see
// runner/exec/launcher.h). Pure.
#include "runner/exec/launcher.h"

#include <string.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "runner/exec/shell.h"

namespace runner {

namespace {

// "echo "<token> ready"; echo "<token> ready" >&<err_fd>"
std::string ready_line(std::string_view token, std::string_view err_fd) {
  std::string marker = "\"" + std::string(token) + " " + std::string(k_ready_word) + "\"";
  return "echo " + marker + "; echo " + marker + " >&" + std::string(err_fd) + "\n";
}

// "; echo "<token> $?"; echo <token> >&<err_fd>" and the line's end.
std::string end_markers(std::string_view token, std::string_view err_fd) {
  std::string text(token);
  return "; echo \"" + text + " $?\"; echo " + text + " >&" + std::string(err_fd) + "\n";
}

// The EXIT trap's command that leaves the "exited" note on fd 3, only when
// the status could be a signal's. The token is printed in two halves, so
// that it never appears whole in the job's command line (a job that lists
// its processes would otherwise print it).
std::string exit_note(std::string_view token) {
  size_t half = token.size() / 2;
  return "[ $? -le 128 ] || printf '%s%s " + std::string(k_exited_word) + "\\n' " +
         shell_quote(token.substr(0, half)) + " " + shell_quote(token.substr(half)) +
         " 2>/dev/null >&3";
}

// The launcher's function `held SINCE`: true when a process whose pid came
// after SINCE (the last pid handed out before the job began: the fifth
// field of /proc/loadavg, which, unlike ns_last_pid, sh can read) has the
// launcher's stdout or stderr (fd 3, 4) as its stdout or stderr. Where at
// most k_held_pids_walked pids were handed out during the job, each of them
// is looked at by number, so the cost does not grow with the processes the
// host runs. Otherwise (a job that started many processes, which took at
// least that long) only the pids that can be newer are listed: those with
// as many digits as SINCE and no smaller first digit, and those with more;
// where pids wrapped around during the job, every process is looked at.
// Builtins only: no process is started to look. A child the job just
// started in the background, that has not yet redirected its output, holds
// it too: its launcher is retired though it need not be, which costs the
// next job a channel, no more.
constexpr int k_held_pids_walked = 256;
std::string held_function() {
  return "holds() {\n"
         "  for fd in \"$1/fd/1\" \"$1/fd/2\"; do\n"
         "    [ \"$fd\" -ef /proc/$$/fd/3 ] || [ \"$fd\" -ef /proc/$$/fd/4 ] && return 0\n"
         "  done\n"
         "  return 1\n"
         "}\n"
         "held() {\n"
         "  since=$1 digits= i=1\n"
         "  case $since in '' | *[!0-9]*) return 1 ;; esac\n"
         "  read _ _ _ _ last </proc/loadavg || return 1\n"
         "  if [ \"$last\" -ge \"$since\" ] && [ $((last - since)) -le " +
         std::to_string(k_held_pids_walked) +
         " ]; then\n"
         "    pid=$since\n"
         "    while [ \"$pid\" -lt \"$last\" ]; do\n"
         "      pid=$((pid + 1))\n"
         "      holds /proc/$pid && return 0\n"
         "    done\n"
         "    return 1\n"
         "  fi\n"
         "  while [ $i -lt ${#since} ]; do digits=\"$digits[0-9]\"; i=$((i + 1)); done\n"
         "  if [ \"$last\" -ge \"$since\" ]; then\n"
         "    set -- /proc/[${since%\"${since#?}\"}-9]$digits /proc/[1-9]$digits[0-9]*\n"
         "  else\n"
         "    set -- /proc/[0-9]*\n"
         "  fi\n"
         "  for dir; do\n"
         "    pid=${dir#/proc/}\n"
         "    case $pid in *[!0-9]*) continue ;; esac\n"
         "    [ \"$pid\" -gt \"$since\" ] ||\n"
         "      { [ \"$last\" -lt \"$since\" ] && [ \"$pid\" -le \"$last\" ]; } || continue\n"
         "    holds \"$dir\" && return 0\n"
         "  done\n"
         "  return 1\n"
         "}\n";
}

// Where `token` first starts in `text`, or npos. Every
// byte of a job's output passes here. 16 positions at a time are checked
// for the token's first and last bytes, which in output rarely stand as
// far apart as in the token; only where both do is the rest compared.
size_t find_token(std::string_view text, std::string_view token) {
  using Bytes = unsigned char __attribute__((vector_size(16)));
  const size_t last = token.size() - 1;
  const Bytes first_byte = Bytes{} + static_cast<unsigned char>(token.front());
  const Bytes last_byte = Bytes{} + static_cast<unsigned char>(token.back());
  size_t start = 0;
  for (; token.size() >= 2 && start + last + sizeof(Bytes) <= text.size(); start += sizeof(Bytes)) {
    Bytes firsts, lasts;
    memcpy(&firsts, text.data() + start, sizeof firsts);
    memcpy(&lasts, text.data() + start + last, sizeof lasts);
    auto both = (firsts == first_byte) & (lasts == last_byte);
    std::uint64_t halves[2];
    memcpy(halves, &both, sizeof halves);
    if ((halves[0] | halves[1]) == 0) continue;
    for (size_t i = 0; i < sizeof(Bytes); ++i) {
      if (both[i] != 0 && memcmp(text.data() + start + i + 1, token.data() + 1, last - 1) == 0)
        return start + i;
    }
  }
  const void* at = memmem(text.data() + start, text.size() - start, token.data(), token.size());
  return at ? static_cast<size_t>(static_cast<const char*>(at) - text.data())
            : std::string_view::npos;
}

// This sh becomes the job's wrapper with `mark` in its environment: the
// group's leader carries the mark too.
std::string marked_wrapper(std::string_view command, std::string_view mark) {
  std::string variable(k_job_mark_variable);
  return variable + "=" + shell_quote(mark) + "; export " + variable + "; exec sh -c " +
         shell_quote(job_wrapper(command));
}

}  // namespace

std::string launcher_script(std::string_view token) {
  // fd 3 and 4 keep the channel's stdout and stderr for the jobs, their
  // notes and the markers; the launcher's own stderr goes nowhere, so that
  // its words on a job's end ("Segmentation fault") are not the job's.
  return "command -v setsid >/dev/null 2>&1 || exit " + std::to_string(k_launcher_unavailable) +
         "\nexec 3>&1 4>&2 2>/dev/null\n" + held_function() + ready_line(token, "4");
}

std::string launcher_job_line(std::string_view command, std::string_view token, long previous_group,
                              std::string_view mark) {
  // The job runs in the foreground (a background job would ignore SIGINT
  // and SIGQUIT). Its shell takes fd 4 as its stderr itself: a redirection
  // on the command line would also be the launcher's while it waits.
  std::string wrapper =
      "exec 2>&4 4>&-; trap " + shell_quote(exit_note(token)) + " EXIT; " + job_wrapper(command);
  // `since` is read before the job starts: every process it starts comes
  // after it. Where there is no /proc, nothing is looked for.
  std::string line =
      "since=; read _ _ _ _ since </proc/loadavg; " + std::string(k_job_mark_variable) + "=" +
      shell_quote(mark) + " setsid sh -c " + shell_quote(wrapper) +
      " </dev/null; job_status=$?; ! held \"$since\" || echo \"" + std::string(token) + " " +
      std::string(k_held_word) + "\"; echo \"" + std::string(token) + " $job_status\"";
  if (previous_group > 0) {
    line = "if kill -s 0 -- -" + std::to_string(previous_group) + " 2>/dev/null; then echo \"" +
           std::string(token) + " " + std::string(k_launcher_busy) + "\"; else " + line + "; fi";
  }
  return line + "; echo " + std::string(token) + " >&4\n";
}

std::string launcher_control_line(std::string_view control, std::string_view token) {
  return "{ " + std::string(control) + "; } </dev/null >/dev/null 2>&4" + end_markers(token, "4");
}

std::string job_channel_script(std::string_view command, std::string_view token,
                               std::string_view mark) {
  // The whole line is read before it runs, so stdin can be emptied first.
  return ready_line(token, "2") + "exec </dev/null; " + marked_wrapper(command, mark) + "\n";
}

std::string input_channel_script(std::string_view command, std::string_view token,
                                 std::string_view mark) {
  return ready_line(token, "2") + marked_wrapper(command, mark) + "\n";
}

std::string control_channel_script(std::string_view control, std::string_view token) {
  return ready_line(token, "2") + "{ " + std::string(control) + "; } </dev/null >/dev/null" +
         end_markers(token, "2");
}

EndMarkerScanner::EndMarkerScanner(std::string token) : m_token(std::move(token)) {}

std::optional<int> EndMarkerScanner::status() const {
  if (m_word.empty() || m_word.size() > 9) return std::nullopt;
  if (!std::all_of(m_word.begin(), m_word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoi(m_word);
}

std::string EndMarkerScanner::take_rest() { return std::exchange(m_rest, {}); }

void EndMarkerScanner::reset() {
  m_held.clear();
  m_in_marker = false;
  m_ended = false;
  m_exited_note = false;
  m_held_note = false;
  m_word.clear();
  m_rest.clear();
}

bool EndMarkerScanner::feed(std::string_view bytes,
                            const std::function<void(std::string_view)>& emit) {
  if (m_ended) return true;
  if (m_in_marker) {
    m_held.append(bytes);
    return finish_marker(emit);
  }
  // Search what was held together with the new bytes; held bytes are at
  // most a token's length, so copying them is cheap.
  std::string_view text = bytes;
  if (!m_held.empty()) {
    m_held.append(bytes);
    text = m_held;
  }
  size_t found = find_token(text, m_token);
  if (found != std::string_view::npos) {
    if (found > 0) emit(text.substr(0, found));
    std::string rest(text.substr(found + m_token.size()));
    m_held = std::move(rest);
    m_in_marker = true;
    return finish_marker(emit);
  }
  // Hold back the longest tail that could begin the token.
  size_t keep = 0;
  for (size_t length = std::min(text.size(), m_token.size() - 1); length > 0; --length) {
    if (text.substr(text.size() - length) == std::string_view(m_token).substr(0, length)) {
      keep = length;
      break;
    }
  }
  if (text.size() > keep) emit(text.substr(0, text.size() - keep));
  m_held = std::string(text.substr(text.size() - keep));
  return false;
}

bool EndMarkerScanner::finish_marker(const std::function<void(std::string_view)>& emit) {
  size_t newline = m_held.find('\n');
  if (newline == std::string::npos) return false;
  std::string_view line = std::string_view(m_held).substr(0, newline);
  if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  std::string word(line);
  std::string rest = m_held.substr(newline + 1);
  m_held.clear();
  m_in_marker = false;
  if (word == k_exited_word || word == k_held_word) {
    // A note; the marker follows.
    (word == k_exited_word ? m_exited_note : m_held_note) = true;
    return feed(rest, emit);
  }
  m_word = std::move(word);
  m_rest = std::move(rest);
  m_ended = true;
  return true;
}

}  // namespace runner
