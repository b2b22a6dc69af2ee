// The real binary against hosts that cannot run jobs as they should: a
// login shell that is broken (its jobs never start), one that takes long to
// start, and sshd's MaxSessions 1 with a job that leaves a process behind.
// Throwaway users need root.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "runner/state/journal.h"
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

struct HostHealth : ::testing::Test {
  testing::TempDir dir;
  testing::LoopbackFleet fleet{dir};
  std::unique_ptr<RemoteUser> user;

  // `hosts` sshd hosts; the first is reached as a fresh user whose login
  // shell is `shell`, the others as the fleet's own user. Skips (fails
  // under CI=true) without sshd or the shell.
  void start_hosts(const std::string& shell, int hosts, int slots,
                   testing::SshdOptions options = {}) {
    options.source_bashrc = true;
    if (!fleet.start(hosts, options)) {
      if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
      GTEST_SKIP() << "no sshd on this machine";
    }
    user = RemoteUser::create(shell);
    RUNNER_REQUIRE_REMOTE_USER(user, shell);
    user->allow_login(fleet.host(0));
    std::string slots_line = "\n  slots: " + std::to_string(slots) + "\n";
    std::string hosts_yaml = "- hostname: " + user->name() +
                             "@127.0.0.1:" + std::to_string(fleet.host(0).port()) + slots_line;
    for (int i = 1; i < hosts; ++i) hosts_yaml += "- hostname: " + fleet.name(i) + slots_line;
    dir.write("hosts.yaml", hosts_yaml);
  }
  void write_jobs(int count) {
    std::string queue;
    for (int i = 0; i < count; ++i) queue += "- echo job-" + std::to_string(i) + "-ran\n";
    dir.write("queue.yaml", queue);
  }
  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(fleet.runner(std::move(args)));
  }
  // Every job ran exactly once.
  void expect_each_ran_once(const std::string& out, int count) {
    for (int i = 0; i < count; ++i)
      EXPECT_EQ(testing::count(out, "job-" + std::to_string(i) + "-ran\n"), 1) << i << "\n" << out;
  }
};

TEST_F(HostHealth, AHostWhoseBashrcExecsAMissingShellIsSetAsideAndTheOtherRunsEveryJob) {
  start_hosts("/bin/bash", 2, 2);
  if (!user) return;
  user->write_file(".bashrc", "exec /missing/zsh\n");
  write_jobs(20);
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  expect_each_ran_once(r.out, 20);
  std::string all = r.out + r.err;
  // Named once, with the reason.
  EXPECT_EQ(testing::count(all, "set aside"), 1) << all;
  EXPECT_EQ(testing::count(all, "the login shell of " + user->name() + " ended (status 127)"), 1)
      << all;
  EXPECT_EQ(testing::count(all, "failed:"), 0) << all;
}

TEST_F(HostHealth, AHostWhoseLoginShellIsBinFalseEndsTheRunWithTheJobsWaiting) {
  start_hosts("/bin/false", 1, 2);
  if (!user) return;
  write_jobs(5);
  ProcessResult r = runner({"queue", "--no-status"});
  EXPECT_EQ(r.status, 1) << r.err << r.out;
  std::string all = r.out + r.err;
  EXPECT_EQ(testing::count(all, "set aside"), 1) << all;
  EXPECT_EQ(testing::count(all, "the login shell of " + user->name() + " ended (status 1)"), 1)
      << all;
  EXPECT_NE(all.find("no usable host is left"), std::string::npos) << all;
  EXPECT_EQ(testing::count(all, "failed:"), 0) << all;
  // Jobs never taken are still in the queue; those that did not start wait
  // for --resume, which the next run asks for.
  EXPECT_NE(dir.read("queue.yaml").find("job-4-ran"), std::string::npos);
  ProcessResult again = runner({"queue", "--no-status"});
  EXPECT_NE(again.status, 0);
  EXPECT_NE((again.out + again.err).find("--resume"), std::string::npos) << again.err;
}

TEST_F(HostHealth, ATimeoutCountsFromTheJobsStartNotTheLoginShells) {
  start_hosts("/bin/bash", 1, 1);
  if (!user) return;
  user->write_file(".bashrc", "sleep 3\n");
  dir.write("queue.yaml", "- command: echo hi-from-job\n  timeout: 2s\n");
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  EXPECT_NE(testing::job_lines(r.out).find("hi-from-job"), std::string::npos) << r.out;
  // Its recorded duration is its process's, not the login shell's 3 s.
  int ends = 0;
  for (const auto& record :
       testing::value_of(read_journal(dir.file("queue.runner/journal.jsonl")))) {
    if (record.value("event", "") != "job_end") continue;
    ++ends;
    EXPECT_LT(record["duration_ms"].get<long>(), 2000) << record.dump();
  }
  EXPECT_EQ(ends, 1);
}

TEST_F(HostHealth, UnderMaxSessionsOneAJobsLeftoverProcessDoesNotBlockTheNextJob) {
  if (!fleet.start(1, {.max_sessions = 1})) {
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  fleet.write_hosts(1);
  // The first job leaves a process that holds its launcher's session; the
  // second must start at once, not when a channel frees up.
  std::string ended = dir.file("first-ended");
  std::string first = "- echo first-ran; sleep 20 & date +%s%N > " + ended + "\n";
  std::string second = "- command: echo second-waited-$(( ($(date +%s%N) - $(cat " + ended +
                       ")) / 1000000 ))-ms\n  timeout: 5s\n";
  dir.write("queue.yaml", first + second);
  ProcessResult r = runner({"queue", "--no-status"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  std::string out = testing::job_lines(r.out);
  auto at = out.find("second-waited-");
  ASSERT_NE(at, std::string::npos) << r.out << r.err;
  EXPECT_LT(std::stol(out.substr(at + 14)), 1500) << r.out;
}

}  // namespace
}  // namespace runner
