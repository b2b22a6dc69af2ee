// Private to the SSH executor: public-key authentication of one session,
// without blocking. Tries ssh-agent identities, then key files, and when all
// fail explains what was tried and the likely cause.
#pragma once

#include <libssh2.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/exec/executor.h"

namespace runner::ssh {

// Who logs in and with what.
struct AuthSettings {
  std::string user;
  std::string host;     // for advice in messages
  std::string display;  // "node03 (127.0.0.1:2222)"
  bool use_agent = true;
  std::string agent_socket;  // empty: $SSH_AUTH_SOCK
  std::vector<std::string> identity_files;
  bool identity_files_explicit = false;  // missing files are worth a note
  // IdentitiesOnly: of the agent's keys, offer only those of identity_files.
  bool identities_only = false;
  // An identity that worked for this host before; tried first.
  std::string preferred;
  // The passphrase of an encrypted key file (asked once per key and run);
  // nullopt when none can be had. Empty function: there is no one to ask.
  std::function<std::optional<std::string>(const std::string& key)> passphrase;
  // Called when the server or libssh2 rejected `passphrase` for `key`.
  std::function<void(const std::string& key, const std::string& passphrase)> passphrase_failed;
};

// Authenticates one handshaken session. Call step() whenever the session's
// socket is ready until it returns something other than pending.
class Authenticator {
 public:
  enum class Progress { pending, done, failed };

  Authenticator(LIBSSH2_SESSION* session, AuthSettings settings);
  ~Authenticator();
  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

  Progress step();
  // When failed.
  const Status& error() const { return m_error; }
  // When done: the identity that worked (to pass as `preferred` next time).
  const std::string& identity() const { return m_identity; }
  // When done: how, for people ("agent key me@laptop", "key ~/.ssh/id_ed25519").
  const std::string& method() const { return m_method; }

 private:
  // One key to try.
  struct Candidate {
    std::string id;           // "agent:<blob>" or the file path
    std::string description;  // for messages
    bool from_agent = false;
    libssh2_agent_publickey* agent_key = nullptr;
    std::string public_file;  // empty: derive from the private key
    std::string public_blob;  // the public key, when known (to match agent keys)
    bool rsa = false;
    bool encrypted = false;
    std::string passphrase;  // for an encrypted file, once asked
    bool passphrase_asked = false;
    int passphrase_failures = 0;
    bool attempt_said = false;  // the debug log named this attempt already
  };

  void collect_candidates();
  Progress fail(const std::string& cause);
  Progress fail_session(int rc);
  std::string tried_summary() const;

  LIBSSH2_SESSION* m_session;
  AuthSettings m_settings;
  bool m_listed = false;
  bool m_collected = false;
  LIBSSH2_AGENT* m_agent = nullptr;
  int m_agent_keys = 0;
  int m_agent_keys_tried = 0;
  std::string m_agent_note;  // why the agent gave nothing
  std::vector<Candidate> m_candidates;
  size_t m_next = 0;
  std::vector<std::string> m_tried_files;
  std::vector<std::string> m_notes;  // keys skipped, and why
  bool m_rsa_tried = false;
  std::string m_identity;
  std::string m_method;
  Status m_error;
};

}  // namespace runner::ssh
