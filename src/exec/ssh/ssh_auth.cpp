// Non-blocking public-key authentication for one SSH session: agent
// identities first, then key files, with one message naming everything
// tried when nothing works.
#include "ssh_auth.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "runner/core/debug_log.h"
#include "runner/core/result.h"
#include "ssh_common.h"

namespace runner::ssh {

namespace {

// What can be learned about a private key file without its passphrase.
struct KeyFileInfo {
  std::string problem;  // non-empty: do not try it, say this instead
  bool encrypted = false;
  bool rsa = false;
  std::string public_blob;  // empty when the file does not show it
};

Result<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Reads an SSH wire string (uint32 length + bytes) at `at`.
std::optional<std::string_view> wire_string(std::string_view data, size_t& at) {
  if (at + 4 > data.size()) return std::nullopt;
  uint32_t length = (static_cast<uint8_t>(data[at]) << 24) |
                    (static_cast<uint8_t>(data[at + 1]) << 16) |
                    (static_cast<uint8_t>(data[at + 2]) << 8) | static_cast<uint8_t>(data[at + 3]);
  at += 4;
  if (length > data.size() - at) return std::nullopt;
  std::string_view value = data.substr(at, length);
  at += length;
  return value;
}

KeyFileInfo inspect_key_file(const std::string& path) {
  KeyFileInfo info;
  Result<std::string> read = read_whole(path);
  if (!read) {
    info.problem = "cannot read it: " + read.status().message();
    return info;
  }
  const std::string& text = *read;
  constexpr std::string_view k_openssh_begin = "-----BEGIN OPENSSH PRIVATE KEY-----";
  constexpr std::string_view k_openssh_end = "-----END OPENSSH PRIVATE KEY-----";
  size_t begin = text.find(k_openssh_begin);
  if (begin != std::string::npos) {
    begin += k_openssh_begin.size();
    size_t end = text.find(k_openssh_end, begin);
    std::optional<std::string> blob = base64_decode(
        std::string_view(text).substr(begin, end == std::string::npos ? end : end - begin));
    constexpr std::string_view k_magic("openssh-key-v1\0", 15);
    if (!blob || blob->compare(0, k_magic.size(), k_magic) != 0) {
      info.problem = "not a private key this program can read";
      return info;
    }
    size_t at = k_magic.size();
    std::optional<std::string_view> cipher = wire_string(*blob, at);
    std::optional<std::string_view> kdf = wire_string(*blob, at);
    std::optional<std::string_view> kdf_options = wire_string(*blob, at);
    at += 4;  // number of keys
    std::optional<std::string_view> public_blob = wire_string(*blob, at);
    if (!cipher || !kdf || !kdf_options || !public_blob) {
      info.problem = "not a private key this program can read";
      return info;
    }
    info.encrypted = *cipher != "none";
    info.public_blob = std::string(*public_blob);
    size_t type_at = 0;
    std::optional<std::string_view> type = wire_string(*public_blob, type_at);
    info.rsa = type && *type == "ssh-rsa";
    return info;
  }
  info.encrypted = text.find("Proc-Type: 4,ENCRYPTED") != std::string::npos ||
                   text.find("BEGIN ENCRYPTED PRIVATE KEY") != std::string::npos;
  info.rsa = text.find("BEGIN RSA PRIVATE KEY") != std::string::npos;
  if (text.find("PRIVATE KEY-----") == std::string::npos) {
    info.problem = "not a private key";
  }
  return info;
}

bool public_file_is_rsa(const std::string& path) {
  std::ifstream in(path);
  std::string type;
  in >> type;
  return type == "ssh-rsa";
}

// The key blob of an OpenSSH .pub file ("TYPE BASE64 COMMENT").
std::string public_file_blob(const std::string& path) {
  std::ifstream in(path);
  std::string type;
  std::string encoded;
  in >> type >> encoded;
  return base64_decode(encoded).value_or("");
}

bool agent_key_is_rsa(const libssh2_agent_publickey* key) {
  size_t at = 0;
  std::string_view blob(reinterpret_cast<const char*>(key->blob), key->blob_len);
  std::optional<std::string_view> type = wire_string(blob, at);
  return type && *type == "ssh-rsa";
}

bool list_contains(std::string_view list, std::string_view word) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view item = list.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item == word) return true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return false;
}

}  // namespace

Authenticator::Authenticator(LIBSSH2_SESSION* session, AuthSettings settings)
    : m_session(session), m_settings(std::move(settings)) {}

Authenticator::~Authenticator() {
  if (m_agent) {
    libssh2_agent_disconnect(m_agent);
    libssh2_agent_free(m_agent);
  }
}

Authenticator::Progress Authenticator::step() {
  const std::string& user = m_settings.user;
  if (!m_listed) {
    char* methods =
        libssh2_userauth_list(m_session, user.c_str(), static_cast<unsigned>(user.size()));
    if (!methods) {
      if (libssh2_userauth_authenticated(m_session)) {
        m_identity = "none";
        return Progress::done;
      }
      int rc = libssh2_session_last_errno(m_session);
      if (rc == LIBSSH2_ERROR_EAGAIN) return Progress::pending;
      return fail_session(rc);
    }
    m_listed = true;
    debug_log::step("{}: the server offers {} authentication for {}", m_settings.display, methods,
                    user);
    if (!list_contains(methods, "publickey")) {
      m_error = {ErrorKind::auth,
                 fmt::format("{}: the server does not accept public-key authentication for {} "
                             "(it offers: {}); this program authenticates with keys only",
                             m_settings.display, user, methods)};
      return Progress::failed;
    }
  }
  if (!m_collected) {
    collect_candidates();
    for (const std::string& note : m_notes)
      debug_log::step("{}: not trying {}", m_settings.display, note);
    if (!m_agent_note.empty()) debug_log::step("{}: {}", m_settings.display, m_agent_note);
  }

  while (m_next < m_candidates.size()) {
    Candidate& candidate = m_candidates[m_next];
    if (candidate.encrypted && !candidate.passphrase_asked) {
      candidate.passphrase_asked = true;
      std::optional<std::string> passphrase =
          m_settings.passphrase ? m_settings.passphrase(candidate.id) : std::nullopt;
      if (!passphrase) {
        debug_log::step("{}: skipping {}: encrypted, and no passphrase", m_settings.display,
                        candidate.description);
        m_notes.push_back(fmt::format(
            "{} (encrypted, and {}: add it to ssh-agent with ssh-add, or run from a terminal)",
            candidate.description,
            m_settings.passphrase ? "no passphrase was given"
                                  : "there is no terminal to ask for its passphrase"));
        ++m_next;
        continue;
      }
      candidate.passphrase = *passphrase;
    }
    int rc;
    if (!candidate.attempt_said) {
      candidate.attempt_said = true;
      debug_log::step("{}: trying {}{}", m_settings.display,
                      candidate.from_agent ? "agent key " : "key ", candidate.description);
    }
    if (candidate.from_agent) {
      rc = libssh2_agent_userauth(m_agent, user.c_str(), candidate.agent_key);
    } else {
      rc = libssh2_userauth_publickey_fromfile_ex(
          m_session, user.c_str(), static_cast<unsigned>(user.size()),
          candidate.public_file.empty() ? nullptr : candidate.public_file.c_str(),
          candidate.id.c_str(), candidate.passphrase.c_str());
    }
    if (rc == LIBSSH2_ERROR_EAGAIN) return Progress::pending;
    candidate.attempt_said = false;
    if (rc == 0) {
      m_identity = candidate.id;
      m_method = candidate.from_agent  ? "agent key " + candidate.description
                 : candidate.encrypted ? "key " + candidate.description + " (passphrase)"
                                       : "key " + candidate.description;
      return Progress::done;
    }
    bool cannot_use = rc == LIBSSH2_ERROR_FILE || rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED;
    if (candidate.encrypted && cannot_use) {
      // Most likely a mistyped passphrase: ask again (the asker gives up
      // after a few tries).
      if (m_settings.passphrase_failed) {
        m_settings.passphrase_failed(candidate.id, candidate.passphrase);
      }
      candidate.passphrase.clear();
      if (++candidate.passphrase_failures >= 3) {
        m_notes.push_back(fmt::format("{} (its passphrase was not accepted: {})",
                                      candidate.description, last_error(m_session)));
        ++m_next;
      } else {
        candidate.passphrase_asked = false;
      }
      continue;
    }
    debug_log::step(
        "{}: {} {}: {}", m_settings.display, candidate.from_agent ? "agent key" : "key",
        candidate.description,
        rc == LIBSSH2_ERROR_FILE ? "libssh2 cannot use it (" + last_error(m_session) + ")"
        : rc == LIBSSH2_ERROR_AUTHENTICATION_FAILED || rc == LIBSSH2_ERROR_PUBLICKEY_UNVERIFIED
            ? std::string("the server did not accept it")
            : last_error(m_session));
    if (candidate.from_agent) {
      ++m_agent_keys_tried;
    } else if (rc == LIBSSH2_ERROR_FILE) {
      m_notes.push_back(fmt::format("{} (libssh2 cannot use it: {})", candidate.description,
                                    last_error(m_session)));
    } else {
      m_tried_files.push_back(candidate.description);
    }
    if (candidate.rsa && rc != LIBSSH2_ERROR_FILE) m_rsa_tried = true;
    ++m_next;
    if (is_session_error(rc)) return fail_session(rc);
  }

  if (m_candidates.empty()) {
    std::string why =
        m_notes.empty() ? "" : fmt::format(" (skipped: {})", fmt::join(m_notes, "; "));
    std::string agent = m_agent_note.empty() ? "" : fmt::format(" ({})", m_agent_note);
    return fail(fmt::format(
        "{}: no key to authenticate as {} with{}{}. Create one with ssh-keygen -t ed25519 and "
        "add its .pub to ~/.ssh/authorized_keys of {} on {}",
        m_settings.display, user, agent, why, user, m_settings.host));
  }
  return fail(fmt::format(
      "{}: authentication as {} failed (tried {}). The server accepted none of these keys: "
      "add your public key to ~/.ssh/authorized_keys of {} on {} (ssh-copy-id does it), or "
      "choose the right key file",
      m_settings.display, user, tried_summary(), user, m_settings.host));
}

void Authenticator::collect_candidates() {
  m_collected = true;
  // OpenSSH's order: agent keys that are also identity files (in the files'
  // order), the agent's other keys (not with IdentitiesOnly), then the
  // identity files the agent does not hold.
  std::vector<Candidate> agent_keys;
  if (m_settings.use_agent) {
    std::string socket = m_settings.agent_socket;
    if (socket.empty()) {
      const char* from_env = std::getenv("SSH_AUTH_SOCK");
      if (from_env) socket = from_env;
    }
    if (socket.empty()) {
      m_agent_note = "no ssh-agent: SSH_AUTH_SOCK is not set";
    } else {
      m_agent = libssh2_agent_init(m_session);
      if (m_agent) libssh2_agent_set_identity_path(m_agent, socket.c_str());
      // The agent is a local socket: connecting and listing block only briefly.
      if (!m_agent || libssh2_agent_connect(m_agent) != 0) {
        m_agent_note = fmt::format("ssh-agent at {} is not reachable", socket);
      } else if (libssh2_agent_list_identities(m_agent) != 0) {
        m_agent_note = fmt::format("ssh-agent at {} did not list its keys", socket);
      } else {
        libssh2_agent_publickey* key = nullptr;
        libssh2_agent_publickey* previous = nullptr;
        while (libssh2_agent_get_identity(m_agent, &key, previous) == 0) {
          Candidate candidate;
          candidate.from_agent = true;
          candidate.agent_key = key;
          candidate.public_blob.assign(reinterpret_cast<const char*>(key->blob), key->blob_len);
          candidate.id = "agent:" + base64_encode(candidate.public_blob);
          candidate.description = key->comment && *key->comment ? key->comment : "agent key";
          candidate.rsa = agent_key_is_rsa(key);
          agent_keys.push_back(candidate);
          previous = key;
        }
        if (agent_keys.empty()) m_agent_note = "ssh-agent holds no keys";
      }
    }
  }

  std::vector<Candidate> files;
  for (const std::string& path : m_settings.identity_files) {
    if (access(path.c_str(), F_OK) != 0) {
      if (m_settings.identity_files_explicit) m_notes.push_back(path + " (no such file)");
      continue;
    }
    KeyFileInfo info = inspect_key_file(path);
    if (!info.problem.empty()) {
      m_notes.push_back(fmt::format("{} ({})", path, info.problem));
      continue;
    }
    Candidate candidate;
    candidate.id = path;
    candidate.description = path;
    candidate.encrypted = info.encrypted;
    candidate.public_blob = info.public_blob;
    std::string public_file = path + ".pub";
    if (access(public_file.c_str(), R_OK) == 0) {
      candidate.public_file = public_file;
      if (candidate.public_blob.empty()) candidate.public_blob = public_file_blob(public_file);
    }
    candidate.rsa = info.rsa || (!candidate.public_file.empty() && public_file_is_rsa(public_file));
    files.push_back(candidate);
  }

  std::vector<bool> agent_used(agent_keys.size(), false);
  std::vector<Candidate> files_left;
  for (Candidate& file : files) {
    bool in_agent = false;
    for (size_t i = 0; i < agent_keys.size(); ++i) {
      if (!agent_used[i] && !file.public_blob.empty() &&
          agent_keys[i].public_blob == file.public_blob) {
        agent_used[i] = true;
        m_candidates.push_back(agent_keys[i]);
        in_agent = true;
        break;
      }
    }
    if (!in_agent) files_left.push_back(std::move(file));
  }
  for (size_t i = 0; i < agent_keys.size(); ++i) {
    if (agent_used[i]) continue;
    if (m_settings.identities_only) {
      m_notes.push_back(fmt::format("agent key {} (IdentitiesOnly: not an identity file)",
                                    agent_keys[i].description));
      continue;
    }
    m_candidates.push_back(agent_keys[i]);
  }
  for (Candidate& file : files_left) m_candidates.push_back(std::move(file));
  for (const Candidate& candidate : m_candidates) {
    if (candidate.from_agent) ++m_agent_keys;
  }

  if (!m_settings.preferred.empty()) {
    for (size_t i = 0; i < m_candidates.size(); ++i) {
      if (m_candidates[i].id == m_settings.preferred) {
        Candidate preferred = m_candidates[i];
        m_candidates.erase(m_candidates.begin() + static_cast<std::ptrdiff_t>(i));
        m_candidates.insert(m_candidates.begin(), preferred);
        break;
      }
    }
  }
}

std::string Authenticator::tried_summary() const {
  std::vector<std::string> parts;
  if (m_agent_keys_tried > 0) {
    parts.push_back(
        fmt::format("agent ({} key{})", m_agent_keys_tried, m_agent_keys_tried == 1 ? "" : "s"));
  }
  for (const std::string& file : m_tried_files) parts.push_back(file);
  if (parts.empty()) parts.push_back("no key");
  if (m_agent_keys_tried == 0 && m_settings.use_agent && !m_agent_note.empty()) {
    parts.push_back(m_agent_note);
  }
  if (!m_notes.empty()) parts.push_back(fmt::format("skipped {}", fmt::join(m_notes, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

Authenticator::Progress Authenticator::fail(const std::string& cause) {
  std::string message = cause;
  // libssh2 signs with rsa-sha2-256/512 from 1.11 on.
  if (m_rsa_tried && LIBSSH2_VERSION_NUM < 0x010b00) {
    const char* banner = libssh2_session_banner_get(m_session);
    std::string server = banner ? fmt::format(" (the server says {})", banner) : "";
    message += fmt::format(
        ". Note: an RSA key was tried, and libssh2 {} can sign with RSA only as ssh-rsa "
        "(SHA-1), which OpenSSH 8.8 and later refuse{}; use an ed25519 key instead "
        "(ssh-keygen -t ed25519, then ssh-copy-id)",
        LIBSSH2_VERSION, server);
  }
  m_error = {ErrorKind::auth, message};
  return Progress::failed;
}

Authenticator::Progress Authenticator::fail_session(int rc) {
  size_t tried = static_cast<size_t>(m_agent_keys_tried) + m_tried_files.size();
  if (tried > 0) {
    return fail(fmt::format(
        "{}: the server closed the connection while authenticating as {} after {} key{} "
        "(tried {}): {}. sshd's MaxAuthTries may be lower than the number of keys offered; "
        "list the right key first",
        m_settings.display, m_settings.user, tried, tried == 1 ? "" : "s", tried_summary(),
        last_error(m_session)));
  }
  m_error = {ErrorKind::protocol, fmt::format("{}: connection lost during authentication: {}",
                                              m_settings.display, last_error(m_session))};
  return Progress::failed;
}

}  // namespace runner::ssh
