// The real binary against accounts whose login shell is not a POSIX sh:
// tcsh, fish, zsh, and shells that are broken. The login shell may only ever
// see one fixed command that starts `sh`; everything else reaches that `sh`
// over stdin. Each test creates throwaway users (needs root).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "runner/state/journal.h"
#include "support/fake_nvidia_smi.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/remote_user.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/value_of.h"

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
    dir.write("hosts.yaml", "- hostname: " + user->name() +
                                "@127.0.0.1:" + std::to_string(fleet.host(0).port()) +
                                "\n  slots: " + std::to_string(slots) + "\n");
  }
  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(fleet.runner(std::move(args)));
  }
  // A job that would run 12 s, with a timeout of 2 s, ends killed by TERM.
  void expect_stopped_at_its_timeout() {
    dir.write("queue.yaml", "- command: sleep 12\n  timeout: 2s\n");
    ProcessResult r = runner({"queue", "--no-status"});
    std::string all = r.out + r.err;
    EXPECT_NE(all.find("timed out (killed by TERM)"), std::string::npos) << all;
    std::vector<nlohmann::json> ends = records_of("job_end");
    ASSERT_EQ(ends.size(), 1u) << all;
    EXPECT_EQ(ends[0]["signal"], "TERM") << ends[0].dump();
    EXPECT_EQ(testing::count(all, "could not send"), 0) << all;
  }
  // The records of the run's journal of one event ("job_end", ...).
  std::vector<nlohmann::json> records_of(const std::string& event) {
    std::vector<nlohmann::json> records;
    for (auto& record : testing::value_of(read_journal(dir.file("queue.runner/journal.jsonl"))))
      if (record.value("event", "") == event) records.push_back(record);
    return records;
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
  EXPECT_NE(testing::job_lines(r.out).find("it's|$HOME|a\\b|!x|"), std::string::npos) << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("sh done"), std::string::npos) << r.out;
}

// `runner push`: the listing and the tar stream reach the host's `sh` over
// stdin, as jobs do; a job whose command mentions docker (here: a `docker`
// of the job's own, so no engine is needed) runs with its `docker`
// function defined, whatever the login shell.
TEST_P(EveryLoginShell, PushAndADockerJobRunAsOnAnyHost) {
  start_host_as(GetParam());
  if (!user) return;
  dir.write("data/a.txt", "it's $HOME\n");
  ProcessResult pushed = runner({"push", "data", "--to", "in"});
  ASSERT_EQ(pushed.status, 0) << pushed.err << pushed.out;
  EXPECT_EQ(testing::sh_output("cat " + user->home() + "/in/data/a.txt"), "it's $HOME\n");
  dir.write("queue.yaml",
            "- command: command() { echo \"docker $*\"; }; docker ps -a; type docker | head -1\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("docker ps -a"), std::string::npos) << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("docker is a"), std::string::npos) << r.out;
}

TEST_F(LoginShell, APushToAHostWhoseShellIsBrokenNamesItAndFails) {
  start_host_as("/bin/false");
  if (!user) return;
  dir.write("data/a.txt", "a\n");
  ProcessResult r = runner({"push", "data"});
  EXPECT_EQ(r.status, 1) << r.err << r.out;
  EXPECT_NE(r.err.find(user->name() + "@127.0.0.1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("FAILED"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(user->home() + "/data/a.txt"));
}

// The GPU monitor, a command of runner's own, reaches the host's `sh` as
// jobs do: a job there gets its GPU's figures from the fake nvidia-smi.
TEST_P(EveryLoginShell, TheGpuMonitorReadsTheHostsGpus) {
  testing::write_fake_nvidia_smi(dir);
  start_host_as(GetParam(), 1,
                {.session_environment = {"PATH=" + dir.file("bin") + ":/usr/bin:/bin"}});
  if (!user) return;
  dir.write("hosts.yaml", "- hostname: " + user->name() + "@127.0.0.1:" +
                              std::to_string(fleet.host(0).port()) + "\n  gpu: [1]\n");
  dir.write("queue.yaml", "- sleep 2\n");
  ProcessResult r = runner({"queue", "--no-status", "--gpu-monitor-period", "100ms"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(r.err.find("monitor"), std::string::npos) << r.err;
  std::vector<nlohmann::json> figures = records_of("job_gpu");
  ASSERT_EQ(figures.size(), 1u) << r.err;
  ASSERT_TRUE(figures[0].contains("gpu")) << figures[0].dump() << r.err;
  EXPECT_NEAR(figures[0]["gpu"]["power_mean_w"].get<double>(), 50, 0.5) << figures[0].dump();
  EXPECT_NEAR(figures[0]["gpu"]["memory_max_mib"].get<double>(), 2000, 1e-6) << figures[0].dump();
}

// A host whose login shell cannot start `sh` runs neither jobs nor the GPU
// monitor, and the run says so, naming the host and why, rather than
// running on without its figures in silence. (Whether the monitor's own end
// is said depends on which of the two the host refuses first.)
TEST_F(LoginShell, AHostWhoseShellIsBrokenRunsNoGpuMonitorAndSaysSo) {
  testing::write_fake_nvidia_smi(dir);
  start_host_as("/bin/false", 1,
                {.session_environment = {"PATH=" + dir.file("bin") + ":/usr/bin:/bin"}});
  if (!user) return;
  dir.write("hosts.yaml", "- hostname: " + user->name() + "@127.0.0.1:" +
                              std::to_string(fleet.host(0).port()) + "\n  gpu: [1]\n");
  dir.write("queue.yaml", "- sleep 1\n");
  ProcessResult r = runner({"queue", "--no-status", "--gpu-monitor-period", "100ms"});
  EXPECT_NE(r.status, 0) << r.err << r.out;
  EXPECT_NE(r.err.find(user->name() + "@127.0.0.1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is it a POSIX shell"), std::string::npos) << r.err;
  EXPECT_TRUE(records_of("job_gpu").empty()) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Shells, EveryLoginShell,
                         ::testing::Values("/bin/bash", "/usr/bin/tcsh", "/usr/bin/zsh",
                                           "/usr/bin/fish"),
                         [](const auto& info) {
                           std::string path = info.param;
                           return path.substr(path.rfind('/') + 1);
                         });

TEST_F(LoginShell, ATimeoutStopsAJobOnATcshHostWhoseOnlyLauncherIsBusy) {
  // The one launcher runs the job, so the stop goes out on a channel of its
  // own, which tcsh starts.
  start_host_as("/usr/bin/tcsh", 1);
  if (!user) return;
  expect_stopped_at_its_timeout();
}

TEST_F(LoginShell, ATimeoutStopsAJobWhenTheBashrcExecsZsh) {
  start_host_as("/bin/bash", 1, {.source_bashrc = true});
  if (!user) return;
  user->write_file(".bashrc", "exec zsh\n");
  expect_stopped_at_its_timeout();
}

TEST_F(LoginShell, AStopThatTheHostsShellCannotRunIsReported) {
  // From the job's start on, every new session's .bashrc execs a missing
  // shell: the stop, on a channel of its own, never reaches the job.
  start_host_as("/bin/bash", 1, {.source_bashrc = true});
  if (!user) return;
  user->write_file(".bashrc", "[ -e ~/no-more-logins ] && exec /missing/zsh\n");
  dir.write("queue.yaml", "- command: touch ~/no-more-logins; sleep 6\n  timeout: 1s\n");
  ProcessResult r = runner({"queue", "--no-status"});
  std::string all = r.out + r.err;
  EXPECT_NE(all.find("could not send SIGTERM to its process group"), std::string::npos) << all;
  // With the reason, and what the shell said last.
  EXPECT_NE(all.find("the login shell of " + user->name() +
                     " ended (status 127) without running `kill`: "),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("/missing/zsh: No such file or directory"), std::string::npos) << all;
  EXPECT_NE(all.find("timed out (exit 0)"), std::string::npos) << all;
}

// The runner's own control commands (here: killing what a dead run left)
// reach a tcsh host's `sh` over stdin, as jobs do.
TEST_F(LoginShell, ResumeKillsWhatADeadRunLeftOnATcshHost) {
  start_host_as("/usr/bin/tcsh");
  if (!user) return;
  // World-writable: the job runs as the throwaway user.
  std::string flag = "/tmp/runner-resume-tcsh-" + std::to_string(::getpid());
  std::filesystem::remove(flag);
  const std::string stuck = "sleep 317.25";
  dir.write("queue.yaml", "- if [ -e " + flag + " ]; then echo second attempt; else touch " + flag +
                              "; " + stuck + "; fi\n");
  {
    testing::Process run(fleet.runner({"queue", "--no-status"}));
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (testing::live_processes_running(stuck) == 0 &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(testing::live_processes_running(stuck), 1) << run.peek_err();
    run.signal(SIGKILL);
    run.wait();
  }
  ASSERT_EQ(testing::live_processes_running(stuck), 1) << "the job outlives its runner";
  ProcessResult resumed = runner({"queue", "--resume", "--no-status"});
  std::filesystem::remove(flag);
  ASSERT_EQ(resumed.status, 0) << resumed.err << resumed.out;
  EXPECT_EQ(testing::live_processes_running(stuck), 0) << resumed.err;
  std::string all = resumed.out + resumed.err;
  EXPECT_NE(all.find("killed 1 leftover process group"), std::string::npos) << all;
  EXPECT_NE(testing::job_lines(resumed.out).find("second attempt"), std::string::npos) << all;
}

TEST_F(LoginShell, MultiLineCommandsRunAsShWouldOnATcshHostWithoutSetsid) {
  start_host_as("/usr/bin/tcsh");
  if (!user) return;
  // A PATH with sh and a few tools but no setsid: jobs there run on a
  // channel each.
  std::string bin = user->home() + "/bin";
  std::filesystem::create_directory(bin);
  for (const char* tool : {"sh", "cat", "sleep", "kill"})
    if (std::filesystem::exists(std::string("/bin/") + tool))
      std::filesystem::create_symlink(std::string("/bin/") + tool, bin + "/" + tool);
  user->write_file(".cshrc", "setenv PATH " + bin + "\n");
  dir.write("queue.yaml",
            "- command: |\n"
            "    printf '%s|' \"it's\" '!x'\n"
            "    echo \"second line $0\"\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_EQ(dir.read("queue.runner/logs/1.log"), "it's|!x|second line sh\n") << r.err;
}

TEST_F(LoginShell, TheLoginShellsStartupOutputIsInNoJobsLog) {
  start_host_as("/bin/bash", 2, {.source_bashrc = true});
  if (!user) return;
  user->write_file(".bashrc", "echo banner-on-stdout; echo banner-on-stderr >&2\n");
  std::string queue;
  for (int i = 1; i <= 6; ++i) queue += "- echo job-" + std::to_string(i) + "\n";
  dir.write("queue.yaml", queue);
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  for (int i = 1; i <= 6; ++i) {
    std::string id = std::to_string(i);
    EXPECT_EQ(dir.read("queue.runner/logs/" + id + ".log"), "job-" + id + "\n") << id;
  }
  EXPECT_EQ((r.out + r.err).find("banner-on"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace runner
