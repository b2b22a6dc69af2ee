// The real binary given Pegasus' command lines (1.4.0, and its job-slots
// `-Q`/`-H`): every option in every mode, as Pegasus takes them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"
#include "support/text.h"

namespace runner {
namespace {

using testing::count;
using testing::ProcessResult;
using testing::TempDir;

// The files have other names than the defaults, so a run that finds them
// took `-H`/`-Q` (or their long names).
struct PegasusCommandLine : ::testing::Test {
  TempDir dir;

  void SetUp() override {
    dir.write("fleet.yaml", "- localhost\n");
    dir.write("jobs.yaml", "- echo hi\n");
  }

  ProcessResult runner(std::vector<std::string> args) {
    return testing::run_process(testing::runner_spec(std::move(args), dir.path()));
  }
};

// A command line and the options runner says it ignores there.
struct Case {
  std::vector<std::string> args;
  std::vector<std::string> ignored;
};

std::string written(const std::vector<std::string>& args) {
  std::string text = "runner";
  for (const std::string& arg : args) text += " " + arg;
  return text;
}

// Each ignored option is said once, and no other.
void expect_ignored(const Case& c, const std::string& err) {
  EXPECT_EQ(count(err, "has no effect"), static_cast<int>(c.ignored.size()))
      << written(c.args) << "\n"
      << err;
  for (const std::string& option : c.ignored)
    EXPECT_EQ(count(err, option + " has no effect"), 1) << written(c.args) << "\n" << err;
}

TEST_F(PegasusCommandLine, QueueAndBroadcastTakeEveryPegasusOption) {
  const std::vector<Case> cases = {
      {{"q", "--hosts-file", "fleet.yaml", "--queue-file", "jobs.yaml", "--editor", "vim"},
       {"--editor"}},
      {{"-H", "fleet.yaml", "q", "-Q", "jobs.yaml", "-i", "-p", "1"}, {}},
      {{"b", "-H", "fleet.yaml", "-Q", "jobs.yaml", "-i", "-p=1", "--editor=vim"}, {"--editor"}},
      {{"--hosts-file=fleet.yaml", "--queue-file=jobs.yaml", "-ip1", "b"}, {}},
      {{"--editor", "vim", "queue", "-H", "fleet.yaml", "-Q", "jobs.yaml", "--print-period=1"},
       {"--editor"}},
  };
  for (const Case& c : cases) {
    dir.write("jobs.yaml", "- echo hi\n");
    ProcessResult r = runner(c.args);
    EXPECT_EQ(r.status, 0) << written(c.args) << "\n" << r.err;
    EXPECT_EQ(testing::job_lines(r.out), "[localhost] hi\n") << written(c.args);
    expect_ignored(c, r.err);
  }
}

TEST_F(PegasusCommandLine, LockTakesEveryPegasusOption) {
  const std::vector<Case> cases = {
      {{"l", "--hosts-file", "fleet.yaml", "--queue-file", "jobs.yaml"}, {"--hosts-file"}},
      {{"l", "-d", "-p", "1", "-Q", "jobs.yaml"}, {"--daemon", "--print-period"}},
      {{"-d", "-i", "-H", "fleet.yaml", "lock", "--print-period=2", "-Q", "jobs.yaml"},
       {"--daemon", "--ignore-errors", "--hosts-file", "--print-period"}},
  };
  for (const Case& c : cases) {
    dir.write("jobs.yaml", "- echo hi\n");
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--editor", "sed -i s/hi/edited/"});
    ProcessResult r = runner(args);
    EXPECT_EQ(r.status, 0) << written(args) << "\n" << r.err;
    EXPECT_EQ(dir.read("jobs.yaml"), "- echo edited\n") << written(args);
    expect_ignored(c, r.err);
  }
}

TEST_F(PegasusCommandLine, VersionInEveryMode) {
  const std::vector<std::vector<std::string>> lines = {
      {"-V"}, {"--version"}, {"q", "-V"}, {"-V", "b"}, {"l", "--version"}};
  for (const std::vector<std::string>& line : lines) {
    ProcessResult r = runner(line);
    EXPECT_EQ(r.status, 0) << written(line) << "\n" << r.err;
    EXPECT_EQ(r.out.rfind("runner ", 0), 0u) << written(line) << ": " << r.out;
  }
}

}  // namespace
}  // namespace runner
