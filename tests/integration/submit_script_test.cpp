// `runner submit`'s batch script: the state directory written into the
// #SBATCH --output line as sbatch reads it (in double quotes, % doubled),
// every path of the script's command shell-quoted, and what a #SBATCH line
// cannot hold refused, naming it and the fix, before anything is written.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runner/cli/options.h"
#include "runner/exec/shell.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

std::string script(const SubmitOptions& options, const std::string& runner_path,
                   const std::string& queue_file, const std::string& state_dir) {
  Result<std::string> text = submit_script(options, runner_path, queue_file, state_dir);
  if (!text) ADD_FAILURE() << text.status().message();
  return text ? *text : "";
}

TEST(SubmitScript, AStateDirectoryWithBlanksHashesAndPercentsIsOneOutputArgument) {
  std::string text = script({}, "/opt/runner", "/lab/q.yaml", "/lab/my runs #2 at 100%d/q.runner");
  EXPECT_NE(text.find("\n#SBATCH --output=\"/lab/my runs #2 at 100%%d/q.runner/slurm-%j.out\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("--state-dir '/lab/my runs #2 at 100%d/q.runner'"), std::string::npos)
      << text;
}

// The script's command run by sh with a stand-in for runner that prints its
// arguments: each path arrives whole, whatever the shell would make of it.
TEST(SubmitScript, EveryPathOfTheCommandArrivesWhole) {
  TempDir dir;
  std::string runner_path = dir.write("bin dir/the runner", "#!/bin/sh\nprintf '%s\\n' \"$@\"\n");
  std::filesystem::permissions(runner_path, std::filesystem::perms::owner_all);
  std::string queue = dir.path() + "/it's $(touch injected) `q`.yaml";
  std::string state = dir.path() + "/a  b;c|d&e*";
  dir.write("submit.sbatch", script({}, runner_path, queue, state));
  std::string said = testing::sh_output("sh " + shell_quote(dir.path() + "/submit.sbatch"));
  EXPECT_EQ(said, "queue\n--slurm\n--daemon\n--resume\n--no-status\n--queue-file\n" + queue +
                      "\n--state-dir\n" + state + "\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/injected"));
}

TEST(SubmitScript, WhatAnSbatchLineCannotHoldIsRefusedNamingItAndTheFix) {
  for (const std::string& state : {std::string("/lab/runs\nrm -rf ~/data"),
                                   std::string("/lab/say \"hi\""), std::string("/lab/a\\b")}) {
    Result<std::string> text = submit_script({}, "/opt/runner", "/lab/q.yaml", state);
    ASSERT_FALSE(text.ok()) << *text;
    EXPECT_NE(text.status().message().find("the state directory " + fmt::format("{:?}", state)),
              std::string::npos)
        << text.status().message();
    EXPECT_NE(text.status().message().find("pass --state-dir"), std::string::npos)
        << text.status().message();
  }
  SubmitOptions options;
  options.partition = "gpu\nrm -rf ~/data";
  Result<std::string> text = submit_script(options, "/opt/runner", "/lab/q.yaml", "/lab/q.runner");
  ASSERT_FALSE(text.ok()) << *text;
  EXPECT_NE(text.status().message().find("--partition \"gpu\\nrm -rf ~/data\" holds a line break"),
            std::string::npos)
      << text.status().message();
  options = {};
  options.sbatch_lines = {"--account=lab\nrm -rf ~/data"};
  EXPECT_FALSE(submit_script(options, "/opt/runner", "/lab/q.yaml", "/lab/q.runner").ok());
}

// The real binary, before sbatch is ever asked: no folder made, nothing
// written, exit 2 with the reason.
TEST(SubmitScript, AStateDirectoryWithALineBreakIsRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  dir.write("queue.yaml", "- echo hi\n");
  std::string state = dir.path() + "/runs\ntouch injected";
  ProcessResult r = testing::run_process(testing::runner_spec(
      {"submit", "--queue-file", "queue.yaml", "--state-dir", state}, dir.path()));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("holds a line break"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pass --state-dir"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(state)) << "no folder made";
}

}  // namespace
}  // namespace runner
