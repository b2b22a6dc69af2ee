// The real binary with flags a user repeats set in the environment instead
// (RUNNER_HOSTS_FILE, RUNNER_QUEUE_FILE, ...) or in the user's config file
// (~/.config/runner/config.yaml): the file gives way to the environment,
// both to the command line, and the help names them.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using testing::ProcessResult;
using testing::TempDir;

// A campaign whose files have other names than the defaults, so a run that
// finds them took them from the environment (or the command line).
struct EnvironmentDefaults : ::testing::Test {
  TempDir dir;
  std::string fleet = dir.write("lab-hosts.yaml", "- localhost\n");
  std::string queue = dir.write("lab-queue.yaml", "- echo hi\n");

  ProcessResult runner(std::vector<std::string> args,
                       const std::map<std::string, std::string>& environment) {
    testing::ProcessSpec spec = testing::runner_spec(std::move(args), dir.path());
    spec.env["XDG_CONFIG_HOME"] = dir.file("config");
    spec.env.insert(environment.begin(), environment.end());
    return testing::run_process(spec);
  }
  void configure(const std::string& text) { dir.write("config/runner/config.yaml", text); }
};

TEST_F(EnvironmentDefaults, TheEnvironmentNamesTheFleetAndTheQueue) {
  ProcessResult r = runner({"queue"}, {{"RUNNER_HOSTS_FILE", fleet}, {"RUNNER_QUEUE_FILE", queue}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("hi\n"), std::string::npos) << r.out;
  EXPECT_EQ(dir.read("lab-queue.yaml"), "[]\n");
}

TEST_F(EnvironmentDefaults, TheCommandLineWinsOverTheEnvironment) {
  ProcessResult r =
      runner({"queue", "--hosts-file", fleet, "-Q", queue},
             {{"RUNNER_HOSTS_FILE", "missing.yaml"}, {"RUNNER_QUEUE_FILE", "missing.yaml"}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(dir.read("lab-queue.yaml"), "[]\n");
}

TEST_F(EnvironmentDefaults, TheHelpNamesTheVariables) {
  ProcessResult r = runner({"queue", "--help"}, {});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* variable :
       {"RUNNER_HOSTS_FILE", "RUNNER_QUEUE_FILE", "RUNNER_SSH_CONFIG", "RUNNER_KNOWN_HOSTS"}) {
    EXPECT_NE(r.out.find(variable), std::string::npos) << variable << "\n" << r.out;
  }
}

TEST_F(EnvironmentDefaults, TheUsersConfigFileNamesTheFleetAndTheQueue) {
  configure("hosts_file: " + fleet + "\nqueue_file: " + queue + "\n");
  ProcessResult r = runner({"queue"}, {});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("hi\n"), std::string::npos) << r.out;
  EXPECT_EQ(dir.read("lab-queue.yaml"), "[]\n");
}

TEST_F(EnvironmentDefaults, TheEnvironmentWinsOverTheConfigFileAndTheCommandLineOverBoth) {
  configure("hosts_file: missing-hosts.yaml\nqueue_file: missing-queue.yaml\n");
  ProcessResult r = runner({"queue"}, {{"RUNNER_HOSTS_FILE", fleet}, {"RUNNER_QUEUE_FILE", queue}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(dir.read("lab-queue.yaml"), "[]\n");
  dir.write("lab-queue.yaml", "- echo again\n");
  r = runner({"queue", "-H", fleet, "-Q", queue}, {{"RUNNER_QUEUE_FILE", "missing.yaml"}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(dir.read("lab-queue.yaml"), "[]\n");
}

TEST_F(EnvironmentDefaults, AConfigFileWithAnUnknownKeyIsAnErrorNamingTheFileAndLine) {
  configure("hosts_file: " + fleet + "\nqueue: " + queue + "\n");
  ProcessResult r = runner({"queue"}, {});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("config/runner/config.yaml:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown key `queue`"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("queue_file"), std::string::npos) << "names the keys it knows: " << r.err;
  EXPECT_EQ(dir.read("lab-queue.yaml"), "- echo hi\n") << "nothing ran";
}

TEST_F(EnvironmentDefaults, AConfigFileKeyThatIsAListIsAnErrorNamingTheFileAndLine) {
  for (const std::string& text :
       {std::string("[hosts_file]: x\n"), std::string("? {a: b}\n: x\n")}) {
    configure(text);
    ProcessResult r = runner({"queue"}, {});
    EXPECT_EQ(r.status, 2) << text << r.err;
    EXPECT_NE(r.err.find("config/runner/config.yaml:1:"), std::string::npos) << text << r.err;
    EXPECT_NE(r.err.find("hosts_file"), std::string::npos) << "names the keys: " << r.err;
    EXPECT_EQ(dir.read("lab-queue.yaml"), "- echo hi\n") << "nothing ran";
  }
}

TEST_F(EnvironmentDefaults, TheHelpNamesTheConfigFile) {
  ProcessResult r = runner({"--help"}, {});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("~/.config/runner/config.yaml"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace runner
