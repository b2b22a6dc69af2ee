// The launcher's shell text and its end-marker scanner (see
// runner/exec/launcher.h). Pure.
#include "runner/exec/launcher.h"

#include <string.h>

#include <algorithm>
#include <utility>

#include "runner/exec/shell.h"

namespace runner {

std::string launcher_command() {
  // The login shell execs a POSIX sh that reads job lines until EOF. A job
  // is run in the foreground, so that it keeps the default handling of
  // SIGINT and SIGQUIT (a background job would ignore them).
  return "exec sh -c " +
         shell_quote("command -v setsid >/dev/null 2>&1 || exit " +
                     std::to_string(k_launcher_unavailable) + "; exec sh -s");
}

std::string launcher_job_line(std::string_view command, std::string_view token,
                              long previous_group) {
  std::string token_text(token);
  std::string line = "setsid sh -c " + shell_quote(job_wrapper(command)) +
                     " </dev/null; echo \"" + token_text + " $?\"";
  if (previous_group > 0) {
    line = "if kill -s 0 -- -" + std::to_string(previous_group) + " 2>/dev/null; then echo \"" +
           token_text + " " + std::string(k_launcher_busy) + "\"; else " + line + "; fi";
  }
  return line + "; echo " + token_text + " >&2\n";
}

std::string launcher_control_line(std::string_view shell_command, std::string_view token) {
  std::string token_text(token);
  return std::string(shell_command) + " </dev/null >/dev/null 2>&1; echo \"" + token_text +
         " $?\"; echo " + token_text + " >&2\n";
}

EndMarkerScanner::EndMarkerScanner(std::string token) : m_token(std::move(token)) {}

std::optional<int> EndMarkerScanner::status() const {
  if (m_word.empty() || m_word.size() > 9) return std::nullopt;
  if (!std::all_of(m_word.begin(), m_word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoi(m_word);
}

void EndMarkerScanner::reset() {
  m_held.clear();
  m_in_marker = false;
  m_ended = false;
  m_word.clear();
}

bool EndMarkerScanner::feed(std::string_view bytes,
                            const std::function<void(std::string_view)>& emit) {
  if (m_ended) return true;
  if (m_in_marker) {
    m_held.append(bytes);
    return finish_marker();
  }
  // Search what was held together with the new bytes; held bytes are at
  // most a token's length, so copying them is cheap.
  std::string_view text = bytes;
  if (!m_held.empty()) {
    m_held.append(bytes);
    text = m_held;
  }
  // memmem skips ahead by pairs of bytes; find() stops at every byte that
  // matches the token's first, which is a letter common in output.
  const void* at = memmem(text.data(), text.size(), m_token.data(), m_token.size());
  if (at != nullptr) {
    size_t found = static_cast<size_t>(static_cast<const char*>(at) - text.data());
    if (found > 0) emit(text.substr(0, found));
    std::string rest(text.substr(found + m_token.size()));
    m_held = std::move(rest);
    m_in_marker = true;
    return finish_marker();
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

bool EndMarkerScanner::finish_marker() {
  size_t newline = m_held.find('\n');
  if (newline == std::string::npos) return false;
  std::string_view line = std::string_view(m_held).substr(0, newline);
  if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  m_word = std::string(line);
  m_held.clear();
  m_in_marker = false;
  m_ended = true;
  return true;
}

}  // namespace runner
