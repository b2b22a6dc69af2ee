// The `docker` function of a job's shell, against a stand-in `docker` that
// prints its arguments: which calls it wraps and how. That the process in
// the container stops with the job is tested against a real engine in
// tests/integration/docker_exec_test.cpp.
#include "runner/exec/docker_exec.h"

#include <gtest/gtest.h>

#include "runner/exec/shell.h"
#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

class DockerFunction : public ::testing::Test {
 protected:
  void SetUp() override {
    dir.write("bin/docker", "#!/bin/sh\nfor arg; do printf '[%s]' \"$arg\"; done; echo\n");
    testing::run_process({{"/bin/chmod", "+x", dir.file("bin/docker")}});
  }

  // What the stand-in saw when a job's shell ran `command`.
  std::string docker_saw(const std::string& command) {
    testing::ProcessSpec spec{{"/bin/sh", "-c", evaluated(command)}};
    spec.env = {{"PATH", dir.file("bin") + ":/usr/bin:/bin"}};
    return testing::run_process(spec).out;
  }

  testing::TempDir dir;
};

// The arguments that run `command` in the container with its pid in the
// first pid file of the job's shell.
std::string wrapped(const std::string& command) {
  return "[sh][-c][echo $$ >\"$0\"; \"$@\"; s=$?; rm -f \"$0\"; exit "
         "$s][/tmp/runner-exec-PID-1.pid]" +
         command;
}

// `seen` with the job shell's pid in the pid file's name written PID.
std::string without_pid(std::string seen) {
  std::size_t at = seen.find("/tmp/runner-exec-");
  if (at == std::string::npos) return seen;
  at += std::string("/tmp/runner-exec-").size();
  std::size_t end = seen.find('-', at);
  return seen.replace(at, end - at, "PID");
}

TEST(DockerExecPrelude, OnlyACommandThatMentionsDockerGetsTheFunction) {
  EXPECT_EQ(docker_exec_prelude("python train.py"), "");
  EXPECT_NE(docker_exec_prelude("docker exec c python train.py").find("docker() {"),
            std::string::npos);
  EXPECT_EQ(docker_exec_prelude("docker ps").find('\n'), std::string::npos)
      << "a launcher reads a job's command as one line";
}

TEST_F(DockerFunction, ExecRunsTheCommandUnderThePidFilesWrapperAfterTheContainer) {
  EXPECT_EQ(without_pid(docker_saw("docker exec box python 'a b' c")),
            "[exec][box]" + wrapped("[python][a b][c]") + "\n");
}

TEST_F(DockerFunction, OptionsAndTheirValuesStayBeforeTheContainer) {
  EXPECT_EQ(
      without_pid(docker_saw("docker exec -it -e A=1 --user 0 -w /x -eB=2 --env=C=3 box sh")),
      "[exec][-it][-e][A=1][--user][0][-w][/x][-eB=2][--env=C=3][box]" + wrapped("[sh]") + "\n");
}

TEST_F(DockerFunction, ADetachedExecAndOtherCommandsAreLeftAsTheyAre) {
  EXPECT_EQ(docker_saw("docker exec -d box sleep 9"), "[exec][-d][box][sleep][9]\n");
  EXPECT_EQ(docker_saw("docker exec -itd box sleep 9"), "[exec][-itd][box][sleep][9]\n");
  EXPECT_EQ(docker_saw("docker exec --detach box sleep 9"), "[exec][--detach][box][sleep][9]\n");
  EXPECT_EQ(docker_saw("docker ps -a"), "[ps][-a]\n");
  EXPECT_EQ(docker_saw("command docker exec box ls"), "[exec][box][ls]\n");
}

TEST_F(DockerFunction, EachExecOfAJobHasAPidFileOfItsOwn) {
  std::string seen = docker_saw("docker exec a x; docker exec b y");
  EXPECT_NE(seen.find("-1.pid][x]"), std::string::npos) << seen;
  EXPECT_NE(seen.find("-2.pid][y]"), std::string::npos) << seen;
}

TEST_F(DockerFunction, TheClientsStatusIsTheFunctions) {
  dir.write("bin/docker", "#!/bin/sh\nexit 7\n");
  testing::ProcessSpec spec{{"/bin/sh", "-c", evaluated("docker exec box true; echo $?")}};
  spec.env = {{"PATH", dir.file("bin") + ":/usr/bin:/bin"}};
  EXPECT_EQ(testing::run_process(spec).out, "7\n");
}

}  // namespace
}  // namespace runner
