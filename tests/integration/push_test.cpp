// `runner push` against real sshd instances on 127.0.0.1: each one's
// sessions start in a folder of their own, as on separate machines. A tree
// copied to every host byte for byte and mode for mode, nothing sent the
// second time, a host that is down named while the others get the files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/sshd.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

struct Push : ::testing::Test {
  TempDir dir;
  testing::LoopbackFleet fleet{dir};

  // Starts `count` hosts, host i's sessions in `home<i>`.
  bool start_hosts(int count) {
    for (int i = 0; i < count; ++i) {
      std::string home = dir.file("home" + std::to_string(i));
      std::filesystem::create_directories(home);
      testing::SshdOptions options;
      options.extra_config = "ForceCommand cd " + home + " && eval \"$SSH_ORIGINAL_COMMAND\"\n";
      if (!fleet.add(options)) return false;
    }
    fleet.write_hosts(1);
    return true;
  }

  // `mib` MiB that differ from block to block.
  void write_big_file(const std::string& name, int mib) {
    std::filesystem::create_directories(std::filesystem::path(dir.file(name)).parent_path());
    std::ofstream big(dir.file(name), std::ios::binary);
    std::string block(1 << 20, '\0');
    for (int m = 0; m < mib; ++m) {
      for (std::size_t b = 0; b < block.size(); b += 8) block[b] = static_cast<char>(m + b / 8);
      big << block;
    }
  }

  // sha256sum of every file under `folder`, by path.
  std::string checksums(const std::string& folder) {
    return testing::sh_output("cd '" + folder +
                              "' && find . -type f | LC_ALL=C sort | xargs sha256sum");
  }

  // `runner broadcast` of `queue` (local files: data/a.txt).
  ProcessResult broadcast(const std::string& queue) {
    dir.write("data/a.txt", "alpha\n");
    dir.write("queue.yaml", queue);
    return testing::run_process(fleet.runner({"broadcast"}));
  }

  ProcessResult push(std::vector<std::string> args) {
    args.insert(args.begin(), "push");
    testing::ProcessSpec spec = fleet.runner(std::move(args));
    spec.timeout = std::chrono::minutes(4);
    return testing::run_process(spec);
  }
};

#define START_OR_SKIP(count)                                                         \
  if (!start_hosts(count)) {                                                         \
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it"; \
    GTEST_SKIP() << "no sshd on this machine";                                       \
  }

TEST_F(Push, CopiesATreeToEveryHostThenNothingTheSecondTime) {
  START_OR_SKIP(4);
  for (int i = 0; i < 1000; ++i)
    dir.write("data/part" + std::to_string(i % 10) + "/f" + std::to_string(i) + ".txt",
              "file " + std::to_string(i) + "\n");
  write_big_file("data/big.bin", 100);
  std::string script = dir.write("data/run.sh", "#!/bin/sh\necho run\n");
  chmod(script.c_str(), 0750);

  ProcessResult first = push({"data", "--to", "in/here"});
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("pushed to 4 of 4 hosts: 4008 files sent (400.0 MiB), 0 skipped"),
            std::string::npos)
      << first.out;
  std::string expected = checksums(dir.file("data"));
  ASSERT_EQ(testing::count(expected, "\n"), 1002);
  for (int i = 0; i < 4; ++i) {
    std::string copy = dir.file("home" + std::to_string(i) + "/in/here/data");
    EXPECT_EQ(checksums(copy), expected) << "host " << i;
    struct stat info {};
    ASSERT_EQ(stat((copy + "/run.sh").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 07777, 0750u) << "host " << i;
  }

  ProcessResult again = push({"data", "--to", "in/here"});
  ASSERT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_EQ(testing::count(again.out, ": 0 files sent (0 B), 1002 skipped\n"), 4) << again.out;
  EXPECT_NE(again.out.find("pushed to 4 of 4 hosts: 0 files sent (0 B), 4008 skipped"),
            std::string::npos)
      << again.out;

  // A changed file and a changed mode go again, alone.
  dir.write("data/part3/f3.txt", "changed\n");
  chmod(dir.file("data/part4/f4.txt").c_str(), 0600);
  ProcessResult changed = push({"data", "--to", "in/here", "--hosts", fleet.name(2)});
  ASSERT_EQ(changed.status, 0) << changed.out << changed.err;
  EXPECT_NE(changed.out.find(fleet.name(2) + ": 2 files sent"), std::string::npos) << changed.out;
  for (int other : {0, 1, 3})
    EXPECT_EQ(changed.out.find(fleet.name(other)), std::string::npos) << changed.out;
  EXPECT_EQ(dir.read("home2/in/here/data/part3/f3.txt"), "changed\n");
  EXPECT_EQ(dir.read("home1/in/here/data/part3/f3.txt"), "file 3\n");
}

TEST_F(Push, AHostThatIsDownIsNamedAndTheOthersGetTheFiles) {
  START_OR_SKIP(3);
  dir.write("model.bin", "weights\n");
  fleet.host(1).stop();
  ProcessResult r = push({"model.bin"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(fleet.name(1) + ": FAILED: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pushed to 2 of 3 hosts: 2 files sent (16 B), 0 skipped; failed: " +
                       fleet.name(1)),
            std::string::npos)
      << r.err;
  EXPECT_EQ(dir.read("home0/model.bin"), "weights\n");
  EXPECT_EQ(dir.read("home2/model.bin"), "weights\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("home1/model.bin")));
}

TEST_F(Push, AHostLostMidTransferIsNamedAndTheOthersGetTheFiles) {
  START_OR_SKIP(2);
  write_big_file("big.bin", 100);
  testing::ProcessSpec spec = fleet.runner({"push", "big.bin"});
  spec.timeout = std::chrono::minutes(2);
  testing::Process pushing(spec);
  // Host 1 has begun to write the file: freeze it there, then drop it.
  ASSERT_TRUE(testing::wait_until(
      [&] { return std::filesystem::exists(dir.file("home1/big.bin")); }, std::chrono::seconds(30)));
  fleet.host(1).pause_sessions();
  std::error_code error;
  std::uintmax_t arrived = std::filesystem::file_size(dir.file("home1/big.bin"), error);
  fleet.host(1).kill_sessions();
  ProcessResult r = pushing.wait();
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  ASSERT_LT(arrived, 100u << 20) << "the transfer ended before the host was dropped";
  EXPECT_NE(r.err.find(fleet.name(1) + ": FAILED: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pushed to 1 of 2 hosts: 1 file sent (100.0 MiB), 0 skipped; failed: " +
                       fleet.name(1)),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::filesystem::file_size(dir.file("home0/big.bin")), 100u << 20);
}

TEST_F(Push, AHostThatStopsReadingAtOnceEndsThePushWithItsReason) {
  START_OR_SKIP(1);
  write_big_file("big.bin", 50);
  // `dest` cannot be made: nothing there reads what is sent.
  dir.write("home0/dest", "a file\n");
  ProcessResult r = push({"big.bin", "--to", "dest"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(fleet.name(0) + ": FAILED: unpacking into dest failed: mkdir: "),
            std::string::npos)
      << r.err;
}

TEST_F(Push, AFileTheHostCannotWriteIsNamedWithTheReason) {
  START_OR_SKIP(1);
  dir.write("conf/a.txt", "a\n");
  // A file where the folder should be.
  dir.write("home0/dest/conf", "in the way\n");
  ProcessResult r = push({"conf", "--to", "dest"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(fleet.name(0) + ": FAILED: unpacking into dest failed: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("conf"), std::string::npos) << r.err;
}

TEST(PushLocal, ALocalHostCopiesSourcesOfSeveralFoldersByTheSameRules) {
  TempDir dir;
  dir.write("hosts.yaml", "- localhost\n");
  std::string tool = dir.write("src/bin/tool", "#!/bin/sh\n");
  chmod(tool.c_str(), 0711);
  dir.write("src/notes.txt", "notes\n");
  dir.write("other/place/more.txt", "more\n");
  ProcessResult first = testing::run_process(testing::runner_spec(
      {"push", "src", "other/place/more.txt", "--to", "dest"}, dir.path()));
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("localhost: 3 files sent (21 B), 0 skipped"), std::string::npos)
      << first.out;
  EXPECT_EQ(dir.read("dest/src/notes.txt"), "notes\n");
  EXPECT_EQ(dir.read("dest/more.txt"), "more\n");
  struct stat info {};
  ASSERT_EQ(stat(dir.file("dest/src/bin/tool").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0711u);
  ProcessResult again = testing::run_process(testing::runner_spec(
      {"push", "src", "other/place/more.txt", "--to", "dest"}, dir.path()));
  ASSERT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("localhost: 0 files sent (0 B), 3 skipped"), std::string::npos)
      << again.out;
}

TEST_F(Push, AFileWhoseNameHoldsANewlineIsNotSentAgain) {
  START_OR_SKIP(1);
  dir.write("data/two\nlines.txt", "odd\n");
  dir.write("data/tab\tand\\slash.txt", "odd too\n");
  ProcessResult first = push({"data", "--to", "in"});
  ASSERT_EQ(first.status, 0) << first.out << first.err;
  EXPECT_NE(first.out.find(": 2 files sent"), std::string::npos) << first.out;
  EXPECT_EQ(dir.read("home0/in/data/two\nlines.txt"), "odd\n");
  ProcessResult again = push({"data", "--to", "in"});
  ASSERT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_NE(again.out.find(": 0 files sent (0 B), 2 skipped"), std::string::npos) << again.out;
}

TEST(PushKey, QueueModeRefusesAJobWithPushNamingItsLine) {
  TempDir dir;
  dir.write("hosts.yaml", "- localhost\n");
  dir.write("queue.yaml", "- echo first\n- command: echo second\n  push: data\n");
  ProcessResult r = testing::run_process(testing::runner_spec({"queue"}, dir.path()));
  EXPECT_NE(r.status, 0) << r.out << r.err;
  // Line 1 of the queue file as it is then, the first job taken.
  EXPECT_EQ(testing::count(r.out + r.err, "the next job (queue line 1) has `push:`, which only a "
                                          "step of `runner broadcast` takes"),
            1)
      << r.out << r.err;
  EXPECT_EQ(testing::count(r.out, "second"), 0) << r.out;
}

TEST_F(Push, ABroadcastStepPushesToEveryHostBeforeItsCommand) {
  START_OR_SKIP(2);
  dir.write("tools/t.sh", "echo tool\n");
  ProcessResult r = broadcast(
      "- push: [data]\n"
      "  push_to: in\n"
      "  command: cat in/data/a.txt\n"
      "- push: tools\n"
      "- command: test -f tools/t.sh && echo has tools\n");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(testing::count(r.out, "] alpha\n"), 2) << r.out;
  EXPECT_EQ(testing::count(r.out, "] has tools\n"), 2) << r.out;
  std::string said = r.out + r.err;
  for (int i = 0; i < 2; ++i) {
    EXPECT_NE(said.find("push to " + fleet.name(i) + ": 1 file sent (6 B), 0 skipped"),
              std::string::npos)
        << said;
    EXPECT_EQ(dir.read("home" + std::to_string(i) + "/tools/t.sh"), "echo tool\n");
  }
}

TEST_F(Push, AHostThePushFailsOnFailsTheStepAndRunsNotItsCommand) {
  START_OR_SKIP(2);
  dir.write("home1/in", "a file where the folder should be\n");
  ProcessResult r = broadcast(
      "- push: data\n"
      "  push_to: in\n"
      "  command: cat in/data/a.txt\n"
      "- echo next step\n");
  EXPECT_NE(r.status, 0) << r.out << r.err;
  std::string said = r.out + r.err;
  EXPECT_NE(said.find("push to " + fleet.name(1) + " failed: "), std::string::npos) << said;
  EXPECT_EQ(testing::count(r.out, "] alpha\n"), 1) << r.out;
  EXPECT_EQ(testing::count(r.out, "next step"), 0) << r.out;
}

// A broadcast run of one step that pushes `mib` MiB (data/big.bin) to the
// first host, then echoes "after the push"; returned once the file has
// begun to arrive there (nullptr, with a failure, if it does not).
std::unique_ptr<testing::Process> start_step_push(Push& test, int mib) {
  test.write_big_file("data/big.bin", mib);
  test.dir.write("queue.yaml", "- push: data\n  command: echo after the push\n");
  auto run = std::make_unique<testing::Process>(test.fleet.runner({"broadcast"}));
  if (testing::wait_until(
          [&] { return std::filesystem::exists(test.dir.file("home0/data/big.bin")); },
          std::chrono::seconds(30)))
    return run;
  ADD_FAILURE() << run->peek_out() << run->peek_err();
  return nullptr;
}

TEST_F(Push, AnInterruptDuringAStepsPushRunsNotItsCommand) {
  START_OR_SKIP(1);
  auto run = start_step_push(*this, 50);
  ASSERT_TRUE(run);
  fleet.host(0).pause_sessions();
  run->signal(SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  fleet.host(0).resume_sessions();
  ProcessResult r = run->wait();
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("after the push"), std::string::npos) << r.out;
}

TEST_F(Push, ASecondInterruptStopsAStepsPushOnItsWay) {
  START_OR_SKIP(1);
  auto run = start_step_push(*this, 300);
  ASSERT_TRUE(run);
  run->signal(SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  run->signal(SIGINT);
  ProcessResult r = run->wait();
  EXPECT_EQ(r.status, 130) << r.out << r.err;
  EXPECT_EQ(r.out.find("after the push"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("push to " + fleet.name(0) + " failed: "), std::string::npos) << r.err;
  EXPECT_LT(std::filesystem::file_size(dir.file("home0/data/big.bin")), 300u << 20)
      << "the copy was cut short";
}

// A `tar` before the real one on PATH that, making an archive, first
// leaves its pid in `tar.pid`, then waits (at most a minute) for a file
// named `release`, then fails with `tar_words` on stderr if they are given.
testing::ProcessSpec runner_with_slow_tar(Push& test, std::vector<std::string> args,
                                          const std::string& tar_words = "") {
  std::string real_tar = testing::sh_output("command -v tar");
  while (!real_tar.empty() && real_tar.back() == '\n') real_tar.pop_back();
  std::string pid_file = test.dir.file("tar.pid"), release = test.dir.file("release");
  std::string fail = tar_words.empty() ? "" : "  echo '" + tar_words + "' >&2; exit 2\n";
  test.dir.write("bin/tar", "#!/bin/sh\ncase \"$1\" in -c*)\n  echo $$ > '" + pid_file +
                                "'\n  i=0; while [ ! -e '" + release +
                                "' ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done\n" + fail +
                                "esac\nexec " + real_tar + " \"$@\"\n");
  std::filesystem::permissions(test.dir.file("bin/tar"), std::filesystem::perms::owner_all);
  std::filesystem::create_directories(test.dir.file("tmp"));
  testing::ProcessSpec spec = test.fleet.runner(std::move(args));
  spec.env["PATH"] = test.dir.file("bin") + ":" + std::getenv("PATH");
  spec.env["TMPDIR"] = test.dir.file("tmp");
  spec.timeout = std::chrono::seconds(30);
  return spec;
}

// The pid the slow tar left, once it has (0 if it does not within 10 s).
long slow_tar_pid(Push& test) {
  if (!testing::wait_until([&] { return std::filesystem::exists(test.dir.file("tar.pid")); },
                           std::chrono::seconds(10)))
    return 0;
  testing::wait_until([&] { return !test.dir.read("tar.pid").empty(); }, std::chrono::seconds(5));
  return std::atol(test.dir.read("tar.pid").c_str());
}

TEST_F(Push, ASecondInterruptStopsAStepsPushWhileItsArchiveIsMade) {
  START_OR_SKIP(2);
  dir.write("data/a.txt", "alpha\n");
  dir.write("queue.yaml", "- push: data\n  command: echo after the push\n");
  testing::Process run(runner_with_slow_tar(*this, {"broadcast"}));
  long tar = slow_tar_pid(*this);
  ASSERT_GT(tar, 0) << run.peek_out() << run.peek_err();
  run.signal(SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  run.signal(SIGINT);
  ProcessResult r = run.wait();
  bool tar_gone = testing::wait_until([&] { return ::kill(tar, 0) != 0; }, std::chrono::seconds(5));
  dir.write("release", "");
  if (!tar_gone) ::kill(tar, SIGKILL);
  EXPECT_EQ(r.status, 130) << "runner answered the interrupts while tar ran\n" << r.out << r.err;
  EXPECT_EQ(r.out.find("after the push"), std::string::npos) << r.out;
  for (int i = 0; i < 2; ++i)
    EXPECT_NE(r.err.find("push to " + fleet.name(i) + " failed: "), std::string::npos) << r.err;
  EXPECT_TRUE(tar_gone) << "the archive's tar was stopped too";
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("tmp"))) << "the archive's folder was removed";
}

TEST_F(Push, AnArchiveThatCannotBeMadeIsNamedWithWhatTarSaid) {
  START_OR_SKIP(1);
  dir.write("data/a.txt", "alpha\n");
  dir.write("release", "");
  ProcessResult r =
      testing::run_process(runner_with_slow_tar(*this, {"push", "data"}, "tar: data/a.txt: boom"));
  EXPECT_NE(r.status, 0) << r.out << r.err;
  std::string said = r.out + r.err;
  bool named = false;
  std::istringstream lines(said);
  for (std::string line; std::getline(lines, line);)
    named = named || (line.find(fleet.name(0)) != std::string::npos &&
                      line.find("tar: data/a.txt: boom") != std::string::npos);
  EXPECT_TRUE(named) << "the host's failure says what tar said\n" << said;
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("tmp"))) << "the archive's folder was removed";
}

}  // namespace
}  // namespace runner
