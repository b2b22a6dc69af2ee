// The real binary's --help and --version: every help names the program and
// gives an example, and the version names the libssh2 it runs with.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

ProcessResult run_runner(std::vector<std::string> args) {
  TempDir dir;
  return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
}

TEST(HelpText, TopLevelHelpNamesTheProgramAndGivesAnExample) {
  ProcessResult result = run_runner({"--help"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("Usage: runner [OPTIONS] SUBCOMMAND"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Example:\n  runner queue "), std::string::npos) << result.out;
}

TEST(HelpText, EverySubcommandsHelpNamesTheProgramAndGivesItsOwnExample) {
  for (std::string subcommand :
       {"queue", "broadcast", "lock", "add", "status", "log", "report", "check", "submit", "push"}) {
    ProcessResult result = run_runner({subcommand, "--help"});
    EXPECT_EQ(result.status, 0) << subcommand << ": " << result.err;
    EXPECT_NE(result.out.find("Usage: runner " + subcommand), std::string::npos) << result.out;
    EXPECT_NE(result.out.find("Example:\n  runner " + subcommand + " "), std::string::npos)
        << result.out;
  }
}

TEST(HelpText, AnAliasShowsItsSubcommandsHelp) {
  ProcessResult result = run_runner({"q", "--help"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_NE(result.out.find("Usage: runner queue [OPTIONS]"), std::string::npos) << result.out;
}

TEST(HelpText, VersionNamesTheProgramAndTheLibssh2ItRunsWith) {
  ProcessResult result = run_runner({"--version"});
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(result.out.rfind("runner 0.", 0), 0u) << result.out;
  EXPECT_NE(result.out.find("\nlibssh2 1."), std::string::npos) << result.out;
}

}  // namespace
}  // namespace runner
