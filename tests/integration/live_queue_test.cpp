// The queue while it drains: `runner add`, daemon pickup, `runner lock` with
// a scripted editor, stale locks, and interrupts.
#include <signal.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::ProcessResult;
using testing::TempDir;

struct LiveQueue : ::testing::Test {
  TempDir dir;

  void SetUp() override { dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n"); }

  ProcessResult runner(std::vector<std::string> args, const std::string& input = "",
                       std::map<std::string, std::string> env = {}) {
    auto spec = testing::runner_spec(std::move(args), dir.path());
    spec.input = input;
    for (auto& [k, v] : env) spec.env[k] = v;
    return testing::run_process(spec);
  }

  std::unique_ptr<Process> start(std::vector<std::string> args) {
    return std::make_unique<Process>(testing::runner_spec(std::move(args), dir.path()));
  }
};

TEST_F(LiveQueue, AddWhileDrainingRunsTheNewJobInTheSameRun) {
  dir.write("queue.yaml", "- sleep 0.5; echo one\n- sleep 0.5; echo two\n");
  auto run = start({"queue"});
  ASSERT_TRUE(run->wait_for_output("] one\n", 10s)) << run->peek_err();
  ProcessResult add = runner({"add", "echo", "added", "later"});
  ASSERT_EQ(add.status, 0) << add.err;
  ProcessResult r = run->wait();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] added later\n"), std::string::npos) << r.out;
  EXPECT_LT(testing::job_lines(r.out).find("] two\n"), testing::job_lines(r.out).find("] added later\n")) << "FIFO order";
}

TEST_F(LiveQueue, AddFromFileAppendsEveryEntry) {
  dir.write("queue.yaml", "# keep me\n- echo existing\n");
  dir.write("more.yaml", "- command: echo <<m>>\n  m: [x, y]\n- echo z\n");
  ProcessResult add = runner({"add", "-f", "more.yaml"});
  ASSERT_EQ(add.status, 0) << add.err;
  EXPECT_NE(add.err.find("added 3 jobs"), std::string::npos) << add.err;
  std::string queue = dir.read("queue.yaml");
  EXPECT_EQ(queue.rfind("# keep me\n- echo existing\n", 0), 0u) << queue;
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* line : {"] existing\n", "] x\n", "] y\n", "] z\n"})
    EXPECT_NE(testing::job_lines(r.out).find(line), std::string::npos) << line;
}

TEST_F(LiveQueue, AddRefusesABrokenQueueAndLeavesItAlone) {
  std::string broken = "- echo a\n- command: [oops\n";
  dir.write("queue.yaml", broken);
  ProcessResult add = runner({"add", "echo", "b"});
  EXPECT_EQ(add.status, 2);
  EXPECT_NE(add.err.find("queue.yaml:"), std::string::npos) << add.err;
  EXPECT_EQ(dir.read("queue.yaml"), broken);
}

TEST_F(LiveQueue, DaemonPicksUpAddedJobsAndStopsOnInterrupt) {
  dir.write("queue.yaml", "");
  auto run = start({"queue", "--daemon"});
  usleep(300'000);
  ASSERT_EQ(runner({"add", "echo", "picked", "up"}).status, 0);
  EXPECT_TRUE(run->wait_for_output("] picked up", 10s)) << run->peek_err();
  ASSERT_EQ(runner({"add", "echo", "and", "again"}).status, 0);
  EXPECT_TRUE(run->wait_for_output("] and again", 10s)) << run->peek_err();
  run->signal(SIGINT);
  ProcessResult r = run->wait();
  EXPECT_EQ(r.status, 130) << r.err;
}

TEST_F(LiveQueue, SecondInterruptKillsEveryRunningJob) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
  // A command line of this test's own makes the jobs' processes easy to find.
  std::string marker = "sleep " + std::to_string(100 + getpid() % 900) + ".25";
  dir.write("queue.yaml",
            "- " + marker + " & " + marker + "; wait\n- " + marker + "\n- echo never\n");
  auto run = start({"queue"});
  testing::wait_until([&] { return testing::live_processes_running(marker) >= 3; }, 5s);
  ASSERT_EQ(testing::live_processes_running(marker), 3);
  run->signal(SIGINT);
  EXPECT_TRUE(run->wait_for_output("interrupt again", 5s)) << run->peek_err();
  EXPECT_EQ(testing::live_processes_running(marker), 3) << "first interrupt kills nothing";
  run->signal(SIGINT);
  ProcessResult r = run->wait();
  EXPECT_EQ(r.status, 130) << r.err;
  testing::wait_until([&] { return testing::live_processes_running(marker) == 0; }, 2s);
  EXPECT_EQ(testing::live_processes_running(marker), 0);
  EXPECT_EQ(testing::job_lines(r.out).find("never"), std::string::npos);
  EXPECT_NE(dir.read("queue.yaml").find("echo never"), std::string::npos);
}

TEST_F(LiveQueue, StaleLockIsBrokenWithAWarning) {
  dir.write("queue.yaml", "- echo ran\n");
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // a pid that no longer runs
  dir.write("queue.yaml.lock", std::to_string(child) + "\n");
  ProcessResult r = runner({"queue"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("stale"), std::string::npos) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] ran\n"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST_F(LiveQueue, LiveLockMakesTheRunnerWait) {
  dir.write("queue.yaml", "- echo ran\n");
  dir.write("queue.yaml.lock", std::to_string(getpid()) + "\n");  // held by us, alive
  auto run = start({"queue"});
  EXPECT_TRUE(run->wait_for_output("locked", 10s)) << run->peek_err();
  EXPECT_EQ(run->peek_out(), "");
  std::filesystem::remove(dir.file("queue.yaml.lock"));
  ProcessResult r = run->wait();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] ran\n"), std::string::npos);
}

// --- runner lock with a scripted editor ---

struct LockMode : LiveQueue {
  // An editor script that runs the given shell lines with the file as $1.
  std::string editor(const std::string& name, const std::string& body) {
    std::string path = dir.write(name, "#!/bin/sh\n" + body + "\n");
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  // The copy of the queue that `runner lock` kept for the user.
  std::string kept_edit() const {
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
      if (entry.path().filename().string().find(".edit-") != std::string::npos)
        return dir.read(entry.path().filename().string());
    return "(no edit kept)";
  }
};

TEST_F(LockMode, SavedEditReplacesTheQueue) {
  dir.write("queue.yaml", "# mine\n- echo a\n");
  std::string ed = editor("ed.sh", "printf -- '- echo b\\n' >> \"$1\"");
  ProcessResult r = runner({"lock", "--editor", ed});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), "# mine\n- echo a\n- echo b\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

TEST_F(LockMode, EditorFromEnvironmentAndLockHeldMeanwhile) {
  dir.write("queue.yaml", "- echo a\n");
  std::string ed = editor("ed.sh", "test -f \"$(dirname \"$1\")/queue.yaml.lock\" && "
                                   "printf -- '- echo locked-while-editing\\n' >> \"$1\"");
  ProcessResult r = runner({"l"}, "", {{"EDITOR", ed}, {"VISUAL", ""}});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(dir.read("queue.yaml").find("locked-while-editing"), std::string::npos);
}

TEST_F(LockMode, BrokenEditIsOfferedAgainThenFixed) {
  dir.write("queue.yaml", "- echo a\n");
  // First save is broken; the second (after answering yes) is fine.
  std::string ed = editor("ed.sh",
                          "if [ -f \"$0.once\" ]; then printf -- '- echo fixed\\n' > \"$1\";\n"
                          "else touch \"$0.once\"; printf -- '- command: [broken\\n' > \"$1\"; fi");
  ProcessResult r = runner({"lock", "--editor", ed}, "y\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("queue.yaml:2:1: not valid YAML"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Edit again?"), std::string::npos) << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), "- echo fixed\n");
}

TEST_F(LockMode, JobsAppendedWithShellRedirectionDuringTheEditAreKept) {
  dir.write("queue.yaml", "- echo a\n");
  // While the user edits, a script appends to the queue itself, lock-free.
  std::string ed = editor("ed.sh",
                          "printf -- '- echo appended\\n' >> \"$(dirname \"$1\")/queue.yaml\"\n"
                          "printf -- '- echo b\\n' >> \"$1\"");
  ProcessResult r = runner({"lock", "--editor", ed});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), "- echo a\n- echo b\n- echo appended\n");
}

TEST_F(LockMode, AnEditIsNotSavedOverAQueueReplacedMeanwhile) {
  dir.write("queue.yaml", "- echo a\n");
  // Another editor saves the queue without the lock while the user edits.
  std::string ed = editor("ed.sh",
                          "printf -- '- echo other\\n' > \"$1.other\" && "
                          "mv \"$1.other\" \"$(dirname \"$1\")/queue.yaml\"\n"
                          "printf -- '- echo b\\n' >> \"$1\"");
  ProcessResult r = runner({"lock", "--editor", ed});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("changed meanwhile"), std::string::npos) << r.err;
  EXPECT_EQ(dir.read("queue.yaml"), "- echo other\n");
  EXPECT_EQ(kept_edit(), "- echo a\n- echo b\n") << "the edit must be kept for the user";
}

TEST_F(LockMode, DecliningToFixKeepsTheQueueAndTheEdit) {
  dir.write("queue.yaml", "- echo a\n");
  std::string ed = editor("ed.sh", "printf -- '- command: [broken\\n' > \"$1\"");
  ProcessResult r = runner({"lock", "--editor", ed}, "n\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(dir.read("queue.yaml"), "- echo a\n");
  EXPECT_EQ(kept_edit(), "- command: [broken\n") << "the broken edit must be kept for the user";
  EXPECT_FALSE(std::filesystem::exists(dir.file("queue.yaml.lock")));
}

}  // namespace
}  // namespace runner
