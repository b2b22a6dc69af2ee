// The real binary against accounts whose login shell is not a POSIX sh:
// tcsh, fish, zsh, and shells that are broken. The login shell may only ever
// see one fixed command that starts `sh`; everything else reaches that `sh`
// over stdin. Each test creates throwaway users (needs root).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/remote_user.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::RemoteUser;

struct LoginShell : ::testing::Test {
  testing::TempDir dir;
  testing::LoopbackFleet fleet{dir};
  std::unique_ptr<RemoteUser> user;

  // One sshd host, reached as a fresh user whose login shell is `shell`,
  // with `slots` slots. Skips (fails under CI=true) without sshd or the shell.
  void start_host_as(const std::string& shell, int slots = 1, testing::SshdOptions options = {}) {
    if (!fleet.start(1, options)) {
      if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
      GTEST_SKIP() << "no sshd on this machine";
    }
    user = RemoteUser::create(shell);
    RUNNER_REQUIRE_REMOTE_USER(user, shell);
    user->allow_login(fleet.host(0));
    dir.write("hosts.yaml", "- hostname: " + user->name() + "@127.0.0.1:" +
                                std::to_string(fleet.host(0).port()) +
                                "\n  slots: " + std::to_string(slots) + "\n");
  }
  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(fleet.runner(std::move(args)));
  }
};

class EveryLoginShell : public LoginShell, public ::testing::WithParamInterface<const char*> {};

TEST_P(EveryLoginShell, RunsCommandsExactlyAsShWould) {
  start_host_as(GetParam());
  if (!user) return;
  dir.write("queue.yaml",
            "- command: |-\n"
            "    printf '%s|' \"it's\" '$HOME' \"a\\\\b\" '!x'\n"
            "    echo \"$0 done\"\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("it's|$HOME|a\\b|!x|"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sh done"), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Shells, EveryLoginShell,
                         ::testing::Values("/bin/bash", "/usr/bin/tcsh", "/usr/bin/zsh",
                                           "/usr/bin/fish"),
                         [](const auto& info) {
                           std::string path = info.param;
                           return path.substr(path.rfind('/') + 1);
                         });

}  // namespace
}  // namespace runner
