// The channel protocol: the end-marker scanner, fed every way a stream can
// be cut, and the launcher's and channels' shell text run by a real /bin/sh
// over pipes.
#include "runner/exec/launcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "runner/exec/shell.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

const std::string k_token = "runner-end-0123456789abcdef";
const std::string k_mark = "0123abcd-7";

struct Fed {
  std::string job;
  bool ended = false;
};

// Feeds `pieces` in order; collects the job's bytes.
Fed feed_all(EndMarkerScanner& scanner, const std::vector<std::string>& pieces) {
  Fed fed;
  for (const std::string& piece : pieces) {
    fed.ended = scanner.feed(piece, [&](std::string_view part) { fed.job.append(part); });
  }
  return fed;
}

TEST(EndMarkerScanner, WholeMarkerInOneRead) {
  EndMarkerScanner scanner(k_token);
  Fed fed = feed_all(scanner, {"hello\nworld\n" + k_token + " 7\n"});
  EXPECT_TRUE(fed.ended);
  EXPECT_EQ(fed.job, "hello\nworld\n");
  EXPECT_EQ(scanner.status(), 7);
  EXPECT_EQ(scanner.word(), "7");
}

TEST(EndMarkerScanner, StreamCutAnywhereGivesTheSameResult) {
  std::string stream = "out\rprogress\n" + k_token.substr(0, 5) + " not it\n" + k_token + " 42\n";
  std::string expected_job = "out\rprogress\n" + k_token.substr(0, 5) + " not it\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    EndMarkerScanner scanner(k_token);
    Fed fed = feed_all(scanner, {stream.substr(0, cut), stream.substr(cut)});
    EXPECT_TRUE(fed.ended) << "cut at " << cut;
    EXPECT_EQ(fed.job, expected_job) << "cut at " << cut;
    EXPECT_EQ(scanner.status(), 42) << "cut at " << cut;
  }
  EndMarkerScanner bytewise(k_token);
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  Fed fed = feed_all(bytewise, bytes);
  EXPECT_TRUE(fed.ended);
  EXPECT_EQ(fed.job, expected_job);
  EXPECT_EQ(bytewise.status(), 42);
}

TEST(EndMarkerScanner, FindsTheTokenAtEveryOffsetAmongLookAlikes) {
  // Look-alikes share the token's first and last bytes (or all but one
  // byte), which is what a search that checks those first must sort out.
  std::string near_miss = k_token;
  near_miss[k_token.size() / 2] = 'X';
  std::string same_ends = k_token.substr(0, 1) + std::string(k_token.size() - 2, 'z') +
                          k_token.substr(k_token.size() - 1);
  for (const std::string& filler : {std::string("r"), std::string("abc\n"), near_miss, same_ends}) {
    for (size_t before = 0; before < 70; ++before) {
      std::string job;
      while (job.size() < before) job += filler;
      job.resize(before);
      std::string after = near_miss + same_ends;
      EndMarkerScanner scanner(k_token);
      Fed fed = feed_all(scanner, {job + k_token + " 3\n" + after});
      EXPECT_TRUE(fed.ended) << "after " << before << " bytes of " << filler;
      EXPECT_EQ(fed.job, job) << "after " << before << " bytes of " << filler;
      EXPECT_EQ(scanner.status(), 3);
      EXPECT_EQ(scanner.take_rest(), after);
      EndMarkerScanner unended(k_token);
      Fed output = feed_all(unended, {job + near_miss + same_ends + "\n"});
      EXPECT_FALSE(output.ended);
      EXPECT_EQ(output.job, job + near_miss + same_ends + "\n");
    }
  }
}

TEST(EndMarkerScanner, OutputWithoutTrailingNewlineEndsAtTheToken) {
  EndMarkerScanner scanner(k_token);
  Fed fed = feed_all(scanner, {"no newline", k_token + " 0\n"});
  EXPECT_EQ(fed.job, "no newline");
  EXPECT_EQ(scanner.status(), 0);
}

TEST(EndMarkerScanner, APossibleTokenStartIsHeldOnlyUntilItIsNotOne) {
  EndMarkerScanner scanner(k_token);
  std::string job;
  auto collect = [&](std::string_view part) { job.append(part); };
  EXPECT_FALSE(scanner.feed("abc runner-en", collect));
  EXPECT_EQ(job, "abc ") << "the possible token start is held back";
  EXPECT_FALSE(scanner.feed("d of the line\n", collect));
  EXPECT_EQ(job, "abc runner-end of the line\n");
  EXPECT_FALSE(scanner.ended());
}

TEST(EndMarkerScanner, AnotherTokenIsJustOutput) {
  EndMarkerScanner scanner(k_token);
  std::string other = "runner-end-fedcba9876543210 5\n";
  Fed fed = feed_all(scanner, {other});
  EXPECT_FALSE(fed.ended);
  EXPECT_EQ(fed.job, other);
}

TEST(EndMarkerScanner, NothingAfterTheMarkerUntilReset) {
  EndMarkerScanner scanner(k_token);
  Fed first = feed_all(scanner, {"one\n" + k_token + " 1\nstray\n", "more stray\n"});
  EXPECT_EQ(first.job, "one\n");
  EXPECT_EQ(scanner.status(), 1);
  scanner.reset();
  EXPECT_FALSE(scanner.ended());
  Fed second = feed_all(scanner, {"two\n" + k_token + " 2\n"});
  EXPECT_EQ(second.job, "two\n");
  EXPECT_EQ(scanner.status(), 2);
}

TEST(EndMarkerScanner, WordsThatAreNotStatuses) {
  EndMarkerScanner stderr_scanner(k_token);
  feed_all(stderr_scanner, {k_token + "\n"});
  EXPECT_TRUE(stderr_scanner.ended());
  EXPECT_EQ(stderr_scanner.word(), "");
  EXPECT_FALSE(stderr_scanner.status().has_value());

  EndMarkerScanner busy(k_token);
  feed_all(busy, {k_token + " " + std::string(k_launcher_busy) + "\n"});
  EXPECT_EQ(busy.word(), k_launcher_busy);
  EXPECT_FALSE(busy.status().has_value());
}

TEST(EndMarkerScanner, TheRestAfterTheMarkerIsKeptForTheNextReader) {
  EndMarkerScanner scanner(k_token);
  Fed noise = feed_all(scanner, {"banner\n" + k_token + " ready\nrunner-pgid 5\n"});
  EXPECT_EQ(noise.job, "banner\n");
  EXPECT_EQ(scanner.word(), k_ready_word);
  EXPECT_EQ(scanner.take_rest(), "runner-pgid 5\n");
  EXPECT_EQ(scanner.take_rest(), "");
}

TEST(EndMarkerScanner, NotesAreRememberedAndNotOutput) {
  // "exited": the job's shell exited; "held": a process it started holds
  // its output.
  for (const char* note : {"exited", "held"}) {
    bool exited = std::string(note) == "exited";
    for (size_t cut = 1; cut < 40; ++cut) {
      std::string stream = "out" + k_token + " " + note + "\n" + k_token + " 139\n";
      EndMarkerScanner scanner(k_token);
      Fed fed = feed_all(scanner, {stream.substr(0, cut), stream.substr(cut)});
      EXPECT_TRUE(fed.ended) << note << cut;
      EXPECT_EQ(fed.job, "out") << note << cut;
      EXPECT_EQ(scanner.exited_note(), exited) << note << cut;
      EXPECT_EQ(scanner.held_note(), !exited) << note << cut;
      EXPECT_EQ(scanner.status(), 139) << note << cut;
      scanner.reset();
      EXPECT_FALSE(scanner.exited_note() || scanner.held_note()) << note << cut;
    }
  }
  EndMarkerScanner killed(k_token);
  feed_all(killed, {"out\n" + k_token + " 139\n"});
  EXPECT_FALSE(killed.exited_note() || killed.held_note());
}

// A channel's shell run by /bin/sh with its stdin, stdout and stderr on
// pipes, as sshd would run it: `login_shell` (an sh command) stands for
// what a login shell does before it runs k_login_command.
class LocalLauncher {
 public:
  explicit LocalLauncher(const std::string& path_variable = "",
                         const std::string& login_shell = "") {
    int in[2], out[2], err[2];
    if (pipe(in) != 0 || pipe(out) != 0 || pipe(err) != 0) return;
    m_pid = fork();
    if (m_pid == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
      for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
      if (!path_variable.empty()) setenv("PATH", path_variable.c_str(), 1);
      std::string command = login_shell + std::string(k_login_command);
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    m_in = in[1];
    m_out = out[0];
    m_err = err[0];
    m_ready = run(launcher_script(k_token));
  }
  ~LocalLauncher() {
    if (m_in >= 0) close(m_in);
    if (m_out >= 0) close(m_out);
    if (m_err >= 0) close(m_err);
    if (m_pid > 0) waitpid(m_pid, nullptr, 0);
  }

  struct Result {
    std::string out;
    std::string err;
    std::string word;
    bool ended = false;
    bool exited_note = false;
    bool held_note = false;
  };

  // What came before the launcher's ready marker.
  const Result& ready() const { return m_ready; }

  // Writes `line` and reads both streams until their markers (or EOF).
  Result run(const std::string& line) {
    EXPECT_EQ(write(m_in, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    EndMarkerScanner out_marker(k_token);
    EndMarkerScanner err_marker(k_token);
    Result result;
    bool open[2] = {true, true};
    while ((open[0] && !out_marker.ended()) || (open[1] && !err_marker.ended())) {
      pollfd fds[2] = {{m_out, POLLIN, 0}, {m_err, POLLIN, 0}};
      if (poll(fds, 2, 10000) <= 0) break;
      for (int i = 0; i < 2; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
        char buffer[4096];
        ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
        if (got <= 0) {
          open[i] = false;
          continue;
        }
        (i == 0 ? out_marker : err_marker)
            .feed(std::string_view(buffer, static_cast<size_t>(got)),
                  [&](std::string_view part) { (i == 0 ? result.out : result.err).append(part); });
      }
    }
    result.ended = out_marker.ended() && err_marker.ended();
    result.word = out_marker.word();
    result.exited_note = out_marker.exited_note();
    result.held_note = out_marker.held_note();
    return result;
  }

  // Closes stdin; returns the launcher's exit status.
  int finish() {
    close(m_in);
    m_in = -1;
    int status = 0;
    waitpid(m_pid, &status, 0);
    m_pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t m_pid = -1;
  int m_in = -1;
  int m_out = -1;
  int m_err = -1;
  Result m_ready;
};

// The job's own output: its stdout without the wrapper's first line.
std::string without_pgid_line(const std::string& out, long* pgid = nullptr) {
  size_t newline = out.find('\n');
  if (newline == std::string::npos) return "<no pgid line in: " + out + ">";
  std::optional<long> parsed = parse_pgid_line(out.substr(0, newline + 1));
  if (!parsed) return "<no pgid line in: " + out + ">";
  if (pgid) *pgid = *parsed;
  return out.substr(newline + 1);
}

TEST(Launcher, RunsJobsOneAfterAnotherExactlyAsShDoes) {
  LocalLauncher launcher;
  ASSERT_EQ(launcher.ready().word, k_ready_word);
  const std::vector<std::string> commands = {
      "printf '%s|' 'single '\\''quoted'\\''' \"dollar \\$HOME\" 'back\\slash'; echo\n"
      "echo \"second line $((1 + 2))\"",
      "-x 2>/dev/null; echo survived a leading dash",
      "echo no newline at the end | tr -d '\\n'",
      "cat; echo stdin was empty",
      "set -- a b; echo $# \"$@\"",
  };
  for (const std::string& command : commands) {
    LocalLauncher::Result result = launcher.run(launcher_job_line(command, k_token, 0, k_mark));
    ASSERT_TRUE(result.ended) << command;
    EXPECT_EQ(result.word, "0") << command << "\n" << result.err;
    EXPECT_EQ(without_pgid_line(result.out), testing::sh_output(command)) << command;
  }
  LocalLauncher::Result name = launcher.run(launcher_job_line("echo $0 $#", k_token, 0, k_mark));
  EXPECT_EQ(without_pgid_line(name.out), "sh 0\n") << "as `sh -c`: no arguments";
  EXPECT_EQ(launcher.finish(), 0);
}

TEST(Launcher, JobsKeepTheDefaultActionOfInterrupts) {
  // A background job of a shell without job control would ignore SIGINT and
  // SIGQUIT; the launcher runs jobs in the foreground.
  LocalLauncher launcher;
  LocalLauncher::Result result =
      launcher.run(launcher_job_line("grep SigIgn /proc/$$/status", k_token, 0, k_mark));
  std::string line = without_pgid_line(result.out);
  ASSERT_EQ(line.rfind("SigIgn:", 0), 0u) << line;
  unsigned long long ignored =
      std::stoull(line.substr(line.find_first_of("0123456789abcdef")), nullptr, 16);
  EXPECT_EQ(ignored & (1ull << (SIGINT - 1)), 0u) << line;
  EXPECT_EQ(ignored & (1ull << (SIGQUIT - 1)), 0u) << line;
}

TEST(Launcher, ReportsTheExitStatusAndStderr) {
  LocalLauncher launcher;
  LocalLauncher::Result result =
      launcher.run(launcher_job_line("echo oops >&2; exit 3", k_token, 0, k_mark));
  EXPECT_EQ(result.word, "3");
  EXPECT_EQ(result.err, "oops\n");
}

TEST(Launcher, ADeathBySignalLeavesNoNoteAndNoWordsOfTheLauncher) {
  LocalLauncher launcher;
  LocalLauncher::Result killed =
      launcher.run(launcher_job_line("echo before; kill -SEGV $$", k_token, 0, k_mark));
  EXPECT_EQ(killed.word, "139");
  EXPECT_FALSE(killed.exited_note);
  EXPECT_EQ(without_pgid_line(killed.out), "before\n");
  EXPECT_EQ(killed.err, "") << "the launcher's own message is not the job's";
  // The same status from an exit leaves the note, also when the job moved
  // its stdout away.
  LocalLauncher::Result exited =
      launcher.run(launcher_job_line("exec >/dev/null; exit 139", k_token, 0, k_mark));
  EXPECT_EQ(exited.word, "139");
  EXPECT_TRUE(exited.exited_note);
}

TEST(Launcher, TheLoginShellsStartupOutputComesBeforeTheReadyMarker) {
  LocalLauncher launcher("", "echo banner; echo banner >&2; ");
  EXPECT_EQ(launcher.ready().word, k_ready_word);
  EXPECT_EQ(launcher.ready().out, "banner\n");
  EXPECT_EQ(launcher.ready().err, "banner\n");
  LocalLauncher::Result job = launcher.run(launcher_job_line("echo mine", k_token, 0, k_mark));
  EXPECT_EQ(without_pgid_line(job.out), "mine\n");
  EXPECT_EQ(job.err, "");
}

TEST(Launcher, TheTokenNeverAppearsWholeInAJobsCommandLine) {
  std::string line = launcher_job_line("ps -o args= -p $$", k_token, 0, k_mark);
  LocalLauncher launcher;
  LocalLauncher::Result job = launcher.run(line);
  EXPECT_EQ(job.word, "0");
  EXPECT_NE(without_pgid_line(job.out).find("sh -c"), std::string::npos) << job.out;
}

TEST(Launcher, EachJobLeadsASessionAndGroupOfItsOwn) {
  LocalLauncher launcher;
  std::vector<long> groups;
  for (int i = 0; i < 2; ++i) {
    LocalLauncher::Result result =
        launcher.run(launcher_job_line("ps -o pid=,pgid=,sid= -p $$", k_token, 0, k_mark));
    long pgid = 0;
    std::istringstream ids(without_pgid_line(result.out, &pgid));
    long pid = 0, group = 0, session = 0;
    ids >> pid >> group >> session;
    EXPECT_EQ(pid, pgid);
    EXPECT_EQ(group, pgid);
    EXPECT_EQ(session, pgid);
    groups.push_back(pgid);
  }
  EXPECT_NE(groups[0], groups[1]);
  EXPECT_NE(groups[0], getpgrp());
}

TEST(Launcher, BusyWhileThePreviousJobsGroupLives) {
  // The job's leftover becomes this process's child when its shell exits,
  // so the test reaps it rather than waiting for init to.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  LocalLauncher launcher;
  LocalLauncher::Result first = launcher.run(
      launcher_job_line("sleep 30 >/dev/null 2>&1 & echo started", k_token, 0, k_mark));
  long group = 0;
  EXPECT_EQ(without_pgid_line(first.out, &group), "started\n");
  LocalLauncher::Result second =
      launcher.run(launcher_job_line("echo must not run", k_token, group, k_mark));
  EXPECT_EQ(second.word, k_launcher_busy);
  EXPECT_EQ(second.out, "");
  // Once the group is empty, the next job runs.
  kill(-static_cast<pid_t>(group), SIGKILL);
  while (waitpid(-static_cast<pid_t>(group), nullptr, 0) > 0) {
  }
  LocalLauncher::Result third = launcher.run(launcher_job_line("echo ran", k_token, group, k_mark));
  EXPECT_EQ(third.word, "0");
  EXPECT_EQ(without_pgid_line(third.out), "ran\n");
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(Launcher, SaysWhenAProcessTheJobStartedStillHoldsItsOutput) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  LocalLauncher launcher;
  // A process that left the job's session and group, and may still write
  // to its output; then one whose output goes elsewhere; then none.
  // (The job waits until its child has moved its output: until then, the
  // child does hold the job's output.)
  const std::string commands[] = {
      "setsid sleep 30 & echo $!",
      "setsid sleep 30 >/dev/null 2>&1 & p=$!; "
      "until [ \"$(readlink /proc/$p/fd/2)\" = /dev/null ]; do :; done; echo $p",
      "echo none"};
  const bool held[] = {true, false, false};
  for (int i = 0; i < 3; ++i) {
    LocalLauncher::Result result = launcher.run(launcher_job_line(commands[i], k_token, 0, k_mark));
    EXPECT_EQ(result.held_note, held[i]) << commands[i];
    EXPECT_EQ(result.word, "0") << commands[i];
    std::string out = without_pgid_line(result.out);
    if (i == 2) {
      EXPECT_EQ(out, "none\n");
      continue;
    }
    pid_t left = static_cast<pid_t>(std::stol(out));
    kill(left, SIGKILL);
    waitpid(left, nullptr, 0);
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(Launcher, AJobThatStartedManyProcessesIsStillSeenHoldingItsOutput) {
  // More pids handed out during the job than are looked at one by one: the
  // launcher lists the newer ones instead, and still finds the holder.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  LocalLauncher launcher;
  LocalLauncher::Result result = launcher.run(launcher_job_line(
      "i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done; setsid sleep 30 & echo $!",
      k_token, 0, k_mark));
  EXPECT_TRUE(result.held_note);
  EXPECT_EQ(result.word, "0");
  pid_t left = static_cast<pid_t>(std::stol(without_pgid_line(result.out)));
  kill(left, SIGKILL);
  waitpid(left, nullptr, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST(Launcher, ControlLineRunsInTheLauncher) {
  LocalLauncher launcher;
  LocalLauncher::Result job = launcher.run(launcher_job_line("echo ok", k_token, 0, k_mark));
  long group = 0;
  without_pgid_line(job.out, &group);
  // Signalling a group that no longer exists is no failure.
  LocalLauncher::Result control =
      launcher.run(launcher_control_line(kill_group_command(group, SIGTERM), k_token));
  EXPECT_TRUE(control.ended);
  EXPECT_EQ(control.word, "0");
  EXPECT_EQ(control.out, "");
}

TEST(Launcher, AControlLineThatFailsSaysWhy) {
  LocalLauncher launcher;
  // The launcher's own group lives; a signal `kill` does not know fails.
  LocalLauncher::Result control =
      launcher.run(launcher_control_line(kill_group_command(getpgrp(), 99), k_token));
  EXPECT_TRUE(control.ended);
  EXPECT_NE(control.word, "0");
  EXPECT_NE(control.err.find("99"), std::string::npos) << control.err;
}

TEST(ChannelScripts, AJobsChannelRunsTheCommandAsShWouldWithStdinEmpty) {
  std::string command = "printf '%s|' \"it's\" '!x'\necho \"second $0\"; cat; echo done";
  testing::ProcessResult r = testing::run_process({{"/bin/sh", "-c", std::string(k_login_command)},
                                                   "",
                                                   {},
                                                   job_channel_script(command, k_token, k_mark)});
  std::string ready = k_token + " " + std::string(k_ready_word) + "\n";
  ASSERT_EQ(r.out.rfind(ready, 0), 0u) << r.out;
  EXPECT_EQ(without_pgid_line(r.out.substr(ready.size())), "it's|!x|second sh\ndone\n");
  EXPECT_EQ(r.err, ready);
}

TEST(ChannelScripts, AControlChannelEndsInItsStatus) {
  // A signal `kill` does not know, to a group that lives (the test's own).
  testing::ProcessResult r =
      testing::run_process({{"/bin/sh", "-c", std::string(k_login_command)},
                            "",
                            {},
                            control_channel_script(kill_group_command(getpgrp(), 99), k_token)});
  std::string ready = k_token + " " + std::string(k_ready_word) + "\n";
  EXPECT_EQ(r.out, ready + k_token + " 1\n");
  ASSERT_EQ(r.err.rfind(ready, 0), 0u) << r.err;
  EXPECT_NE(r.err.find("99"), std::string::npos) << r.err;
}

TEST(Launcher, ExitsWithItsOwnStatusWhereSetsidIsMissing) {
  testing::TempDir dir;
  std::string bin = dir.file("bin");
  std::filesystem::create_directory(bin);
  std::filesystem::create_symlink("/bin/sh", bin + "/sh");
  LocalLauncher launcher(bin);
  EXPECT_EQ(launcher.finish(), k_launcher_unavailable);
}

}  // namespace
}  // namespace runner
