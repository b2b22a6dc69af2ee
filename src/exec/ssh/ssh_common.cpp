// libssh2 set-up and small helpers shared by the SSH executor's pieces.
#include "ssh_common.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <mutex>
#include <utility>

#include "runner/exec/shell.h"

namespace runner::ssh {

namespace {

constexpr char k_base64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

Tunnel::~Tunnel() {
  if (fd >= 0) ::close(fd);
}

int Tunnel::take_fd() { return std::exchange(fd, -1); }

void initialize_libssh2() {
  static std::once_flag once;
  std::call_once(once, [] { libssh2_init(0); });
}

void free_session(LIBSSH2_SESSION*& session, int fd) {
  if (!session) return;
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (libssh2_session_free(session) != LIBSSH2_ERROR_EAGAIN) break;
  }
  session = nullptr;
}

std::string last_error(LIBSSH2_SESSION* session) {
  if (!session) return "no session";
  char* message = nullptr;
  int length = 0;
  libssh2_session_last_error(session, &message, &length, 0);
  if (!message || length <= 0) return "unknown error";
  return std::string(message, static_cast<size_t>(length));
}

bool is_session_error(int rc) {
  switch (rc) {
    case LIBSSH2_ERROR_SOCKET_NONE:
    case LIBSSH2_ERROR_BANNER_RECV:
    case LIBSSH2_ERROR_BANNER_SEND:
    case LIBSSH2_ERROR_INVALID_MAC:
    case LIBSSH2_ERROR_KEX_FAILURE:
    case LIBSSH2_ERROR_ALLOC:
    case LIBSSH2_ERROR_SOCKET_SEND:
    case LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE:
    case LIBSSH2_ERROR_TIMEOUT:
    case LIBSSH2_ERROR_DECRYPT:
    case LIBSSH2_ERROR_SOCKET_DISCONNECT:
    case LIBSSH2_ERROR_PROTO:
    case LIBSSH2_ERROR_SOCKET_TIMEOUT:
    case LIBSSH2_ERROR_SOCKET_RECV:
    case LIBSSH2_ERROR_ENCRYPT:
    case LIBSSH2_ERROR_BAD_SOCKET:
    case LIBSSH2_ERROR_COMPRESS:
    case LIBSSH2_ERROR_ZLIB:
      return true;
    default:
      return false;
  }
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t at) { return static_cast<unsigned char>(bytes[at]); };
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned value = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += k_base64_alphabet[(value >> 18) & 63];
    out += k_base64_alphabet[(value >> 12) & 63];
    out += k_base64_alphabet[(value >> 6) & 63];
    out += k_base64_alphabet[value & 63];
  }
  if (i + 1 == bytes.size()) {
    unsigned value = byte(i) << 16;
    out += k_base64_alphabet[(value >> 18) & 63];
    out += k_base64_alphabet[(value >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    unsigned value = (byte(i) << 16) | (byte(i + 1) << 8);
    out += k_base64_alphabet[(value >> 18) & 63];
    out += k_base64_alphabet[(value >> 12) & 63];
    out += k_base64_alphabet[(value >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string out;
  unsigned value = 0;
  int bits = 0;
  for (char c : text) {
    int digit;
    if (c >= 'A' && c <= 'Z') {
      digit = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      digit = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      digit = c - '0' + 52;
    } else if (c == '+') {
      digit = 62;
    } else if (c == '/') {
      digit = 63;
    } else if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') {
      continue;
    } else {
      return std::nullopt;
    }
    value = (value << 6) | static_cast<unsigned>(digit);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((value >> bits) & 0xff);
    }
  }
  return out;
}

std::string shell_word(std::string_view text) {
  bool plain = !text.empty() && text.find_first_not_of(
                                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                    "0123456789/._-+~@:,=") == std::string_view::npos;
  return plain ? std::string(text) : shell_quote(text);
}

std::string keep_tail(std::string text, size_t limit) {
  if (text.size() > limit) text.erase(0, text.size() - limit);
  return text;
}

std::string last_line(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.remove_suffix(1);
  size_t start = text.find_last_of('\n');
  std::string line(start == std::string_view::npos ? text : text.substr(start + 1));
  for (char& c : line)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return line;
}

std::string describe_duration(std::chrono::milliseconds duration) {
  auto ms = duration.count();
  if (ms < 1000) return fmt::format("{} ms", ms);
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0);
}

std::string lowercase_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace runner::ssh

namespace runner {

std::string libssh2_runtime_version() { return libssh2_version(0); }

}  // namespace runner
