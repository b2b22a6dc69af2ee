// Shell quoting and the job wrapper, checked against a real /bin/sh.
#include "runner/exec/shell.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/process.h"
#include "support/sshd.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

const std::vector<std::string> k_nasty = {
    "",
    "plain",
    "it's",
    "'",
    "''",
    "'leading and trailing'",
    "double \" quote",
    "$HOME and ${PATH} and $(id) and `id`",
    "back\\slash\\",
    "\\'",
    "new\nline\n",
    "tab\there",
    "glob * ? [a]",
    "; & | < > ( ) { } ! #",
    "-n",
    "h\xc3\xa9llo",
};

TEST(ShellQuote, RoundTripsThroughSh) {
  for (const std::string& text : k_nasty) {
    EXPECT_EQ(testing::sh_output("printf '%s' " + shell_quote(text)), text) << "for: " << text;
  }
}

TEST(ShellQuote, WrapsInSingleQuotes) {
  EXPECT_EQ(shell_quote("abc"), "'abc'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

TEST(JobWrapper, PrintsPgidLineThenRunsCommandExactly) {
  std::string command =
      "printf '%s|' 'single '\\''quoted'\\''' \"dollar \\$HOME\" 'back\\slash'; echo\n"
      "echo \"second line $((1 + 2))\"";
  std::string direct = testing::sh_output(command);
  std::string wrapped = testing::sh_output(job_wrapper(command));
  size_t newline = wrapped.find('\n');
  ASSERT_NE(newline, std::string::npos);
  std::optional<long> pgid = parse_pgid_line(wrapped.substr(0, newline + 1));
  ASSERT_TRUE(pgid.has_value()) << wrapped;
  EXPECT_GT(*pgid, 0);
  EXPECT_EQ(wrapped.substr(newline + 1), direct);
  EXPECT_EQ(direct, "single 'quoted'|dollar $HOME|back\\slash|\nsecond line 3\n");
}

TEST(JobWrapper, CommandStartingWithDashIsNotAnOption) {
  std::string wrapped = testing::sh_output(job_wrapper("-x 2>/dev/null; echo survived"));
  EXPECT_NE(wrapped.find("runner-pgid "), std::string::npos);
  // `-x` runs as a command (not found), then the rest of the line.
  EXPECT_NE(wrapped.find("survived\n"), std::string::npos) << wrapped;
}

TEST(JobWrapper, PgidIsTheWrapperProcess) {
  // The pid the wrapper prints is the process that becomes the command.
  std::string wrapped = testing::sh_output(job_wrapper("echo $$"));
  size_t newline = wrapped.find('\n');
  ASSERT_NE(newline, std::string::npos);
  std::optional<long> pgid = parse_pgid_line(wrapped.substr(0, newline));
  ASSERT_TRUE(pgid.has_value());
  EXPECT_EQ(wrapped.substr(newline + 1), std::to_string(*pgid) + "\n");
}

TEST(ParsePgidLine, AcceptsTheWrapperLine) {
  EXPECT_EQ(parse_pgid_line("runner-pgid 123"), 123);
  EXPECT_EQ(parse_pgid_line("runner-pgid 4194304\n"), 4194304);
}

TEST(ParsePgidLine, RejectsAnythingElse) {
  EXPECT_FALSE(parse_pgid_line(""));
  EXPECT_FALSE(parse_pgid_line("runner-pgid "));
  EXPECT_FALSE(parse_pgid_line("runner-pgid x12"));
  EXPECT_FALSE(parse_pgid_line("runner-pgid 12 "));
  EXPECT_FALSE(parse_pgid_line("runner-pgid -5"));
  EXPECT_FALSE(parse_pgid_line("runner-pgid 0"));
  EXPECT_FALSE(parse_pgid_line(" runner-pgid 12"));
  EXPECT_FALSE(parse_pgid_line("hello from .bashrc"));
  EXPECT_FALSE(parse_pgid_line("runner-pgid 99999999999999999999999"));
}

TEST(KillGroupCommand, NamesSignalAndGroup) {
  EXPECT_EQ(kill_group_command(123, SIGTERM),
            "kill -s TERM -- -123 || ! kill -s 0 -- -123 2>/dev/null");
  EXPECT_EQ(kill_group_command(7, SIGKILL), "kill -s KILL -- -7 || ! kill -s 0 -- -7 2>/dev/null");
}

TEST(KillGroupCommand, KillsTheWholeGroupThroughSh) {
  pid_t leader = fork();
  if (leader == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", "sleep 30 & sleep 30; wait", static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(leader, leader);
  // Give the group's shell time to start its children.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  testing::sh_output(kill_group_command(leader, SIGTERM));
  int status = 0;
  ASSERT_EQ(waitpid(leader, &status, 0), leader);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!testing::running_group_members(leader).empty() &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(testing::running_group_members(leader).empty()) << "a process of the group survived";
}

TEST(KillLeftoversCommand, KillsEachGroupOnlyWhileOneOfItsProcessesCarriesTheJobsMark) {
  std::string command = kill_leftovers_command({{1001, "0a-1"}, {777, ""}});
  // A marked group is killed only if it is still the job's.
  EXPECT_NE(command.find("if kill -s 0 -- -1001 2>/dev/null; then\n"
                         "  if ours 1001 '0a-1'; then kill -s KILL -- -1001; echo killed 1001; "
                         "else echo kept 1001; fi\n"),
            std::string::npos)
      << command;
  // One recorded without a mark is taken as the job's.
  EXPECT_NE(command.find("  if true; then kill -s KILL -- -777; echo killed 777;"),
            std::string::npos)
      << command;
}

TEST(SignalName, UsesNamesWithoutSigPrefix) {
  EXPECT_EQ(signal_name(SIGTERM), "TERM");
  EXPECT_EQ(signal_name(SIGKILL), "KILL");
  EXPECT_EQ(signal_name(SIGINT), "INT");
  EXPECT_EQ(signal_name(SIGUSR1), "USR1");
  EXPECT_EQ(signal_name(250), "250");
}

}  // namespace
}  // namespace runner

namespace runner {
namespace {

TEST(SetUpCommand, WritesItsFilesExportsItsVariablesThenRunsTheCommand) {
  testing::TempDir dir;
  for (const std::string& text : k_nasty) {
    std::string path = dir.file("host file");
    std::string script =
        set_up_command({{"RUNNER_RANK", text}, {"OTHER", "2"}}, {{path, text + "\nend\n"}},
                       "printf '%s|%s|' \"$RUNNER_RANK\" \"$OTHER\"; cat \"" + path + "\"", "7");
    EXPECT_EQ(testing::sh_output(script), text + "|2|" + text + "\nend\n") << "for: " << text;
  }
}

TEST(SetUpCommand, AReaderNeverSeesTheFileHalfWrittenWhileOthersWriteIt) {
  // Two writers of the same path, as two ranks on one host: each writes it
  // whole beside the path and renames it on, so the other's reading finds
  // it whole (or its own) every time, never emptied.
  testing::TempDir dir;
  std::string path = dir.file("hostfile");
  std::string content(16 * 1024, 'h');
  std::string rewrite = set_up_command({}, {{path, content}}, "true", "1");
  std::string reader =
      set_up_command({}, {{path, content}},
                     "i=0; while [ $i -lt 200 ]; do [ \"$(wc -c < " + shell_quote(path) +
                         ")\" -eq 16384 ] || echo torn; i=$((i + 1)); done",
                     "2");
  std::string script = "( i=0; while [ $i -lt 200 ]; do " + rewrite + "\n i=$((i + 1)); done ) & " +
                       reader + "\nwait";
  EXPECT_EQ(testing::sh_output(script), "");
  EXPECT_EQ(dir.read("hostfile"), content);
  EXPECT_FALSE(std::filesystem::exists(path + ".runner-1.tmp"));
}

TEST(SetUpCommand, AFileThatCannotBeWrittenStopsTheCommand) {
  std::string script = set_up_command({}, {{"/nonexistent-dir/hostfile", "x"}}, "echo ran", "7");
  EXPECT_EQ(testing::sh_output(script + "; echo after"), "");
}

}  // namespace
}  // namespace runner
