// A throwaway local user for tests that need a remote account whose login
// shell is not the test's own (tcsh, fish, zsh, a bash that execs something
// missing, /bin/false). The test sshd authorizes its client key for every
// user (AuthorizedKeysFile is absolute), so `name()@127.0.0.1:PORT` reaches
// the account once allow_login() made that file readable to it. Needs root
// (useradd); the user and its home are removed when the object goes away.
#pragma once

#include <memory>
#include <string>

#include "support/sshd.h"

namespace runner::testing {

class RemoteUser {
 public:
  // Creates a user with a fresh name, a home directory and `shell` as its
  // login shell. Returns nullptr when the shell is not installed or the test
  // is not root; throws std::runtime_error when useradd fails otherwise.
  static std::unique_ptr<RemoteUser> create(const std::string& shell);

  ~RemoteUser();
  RemoteUser(const RemoteUser&) = delete;
  RemoteUser& operator=(const RemoteUser&) = delete;

  const std::string& name() const { return m_name; }
  const std::string& home() const { return m_home; }
  const std::string& shell() const { return m_shell; }
  // Lets this user log in to `sshd` with its client key: sshd reads the
  // authorized keys as the user, so the file becomes readable by all and
  // its folders (the test's own, under $TMPDIR) traversable.
  void allow_login(const Sshd& sshd) const;
  // Writes `text` to home()/relative, owned by the user (a .bashrc, .cshrc).
  void write_file(const std::string& relative, const std::string& text) const;

 private:
  RemoteUser() = default;
  std::string m_name;
  std::string m_home;
  std::string m_shell;
};

// True when `shell` is an installed executable.
bool shell_installed(const std::string& shell);

}  // namespace runner::testing

// In a test body, after `auto user = RemoteUser::create(shell)`: skips the
// test when the shell is missing or the test is not root, but fails it when
// CI=true (scripts/setup.sh installs tcsh, zsh and fish; tests run as root).
#define RUNNER_REQUIRE_REMOTE_USER(ptr, shell)                                              \
  do {                                                                                      \
    if (!(ptr)) {                                                                           \
      if (::runner::testing::sshd_required()) {                                             \
        FAIL() << "cannot create a user with login shell " << (shell)                       \
               << " (install it; tests run as root), and CI=true requires it";             \
      }                                                                                     \
      GTEST_SKIP() << "cannot create a user with login shell " << (shell);                  \
    }                                                                                       \
  } while (false)
