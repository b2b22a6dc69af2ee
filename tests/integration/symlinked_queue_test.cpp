// A queue reached through a symbolic link (`queue.yaml -> ../shared/queue.yaml`):
// the daemon wakes on edits made through it, the link and its target share
// one lock, and rewriting the queue keeps the link a link.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

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

struct SymlinkedQueue : ::testing::Test {
  TempDir dir;  // work/queue.yaml -> ../shared/queue.yaml
  std::string work = dir.file("work");
  std::string target = dir.file("shared/queue.yaml");
  std::string link = dir.file("work/queue.yaml");

  void SetUp() override {
    dir.write("work/hosts.yaml", "- hostname: localhost\n  slots: 1\n");
    std::filesystem::create_directories(dir.file("shared"));
    std::filesystem::create_symlink("../shared/queue.yaml", link);
  }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), work));
  }

  // Appends `text` to the queue through the link, as `>>` in a shell does.
  void append_through_link(const std::string& text) {
    testing::ProcessSpec spec{{"/bin/sh", "-c", "printf '%s' \"$1\" >> queue.yaml", "sh", text},
                              work};
    ASSERT_EQ(testing::run_process(spec).status, 0);
  }

  // An editor for `runner lock` that says it started (a file `started`
  // beside the queue link), waits for a file `release`, then adds a job.
  std::string waiting_editor() {
    std::string path = dir.write("editor.sh",
                                 "#!/bin/sh\n"
                                 "touch '" +
                                     dir.file("started") +
                                     "'\n"
                                     "while [ ! -f '" +
                                     dir.file("release") +
                                     "' ]; do sleep 0.05; done\n"
                                     "printf -- '- echo edited\\n' >> \"$1\"\n");
    std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    return path;
  }

  // Holds the lock with `runner lock --queue-file lock_through` while
  // `runner add --queue-file add_through echo added` tries to add a job;
  // then lets the edit finish. Returns the queue afterwards.
  std::string lock_then_add(const std::string& lock_through, const std::string& add_through) {
    dir.write("shared/queue.yaml", "- echo first\n");
    Process lock(testing::runner_spec(
        {"lock", "--queue-file", lock_through, "--editor", waiting_editor()}, work));
    EXPECT_TRUE(
        testing::wait_until([&] { return std::filesystem::exists(dir.file("started")); }, 10s));
    Process add(testing::runner_spec({"add", "--queue-file", add_through, "echo", "added"}, work));
    usleep(500'000);  // long enough for an add that ignores the lock to be done
    dir.write("release", "");
    ProcessResult locked = lock.wait();
    EXPECT_EQ(locked.status, 0) << locked.err;
    ProcessResult added = add.wait();
    EXPECT_EQ(added.status, 0) << added.err;
    return dir.read("shared/queue.yaml");
  }
};

TEST_F(SymlinkedQueue, DaemonWakesOnAnEditThroughTheLink) {
  dir.write("shared/queue.yaml", "");
  Process run(testing::runner_spec({"queue", "--daemon"}, work));
  usleep(300'000);
  append_through_link("- echo woke up\n");
  EXPECT_TRUE(run.wait_for_output("] woke up", 5s)) << run.peek_err();
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 130) << r.err;
}

TEST_F(SymlinkedQueue, LockThroughTheLinkMakesAnAddOnTheTargetWait) {
  std::string queue = lock_then_add("queue.yaml", target);
  EXPECT_EQ(queue, "- echo first\n- echo edited\n- echo added\n");
}

TEST_F(SymlinkedQueue, LockOnTheTargetMakesAnAddThroughTheLinkWait) {
  std::string queue = lock_then_add(target, "queue.yaml");
  EXPECT_EQ(queue, "- echo first\n- echo edited\n- echo added\n");
}

TEST_F(SymlinkedQueue, TakingJobsKeepsTheLinkALink) {
  dir.write("shared/queue.yaml", "- echo one\n- echo two\n");
  ProcessResult r = runner({"queue"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(testing::job_lines(r.out).find("] two\n"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(dir.read("shared/queue.yaml"), "[]\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("shared/queue.yaml.lock")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("work/queue.yaml.lock")));
}

TEST_F(SymlinkedQueue, AddThroughALinkToAFileNotYetCreatedCreatesTheTarget) {
  ProcessResult added = runner({"add", "echo", "new"});
  ASSERT_EQ(added.status, 0) << added.err;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(dir.read("shared/queue.yaml"), "- echo new\n");
}

}  // namespace
}  // namespace runner
