// Jobs that run `docker exec`, against a real Docker engine: when runner
// stops such a job (its timeout, a second Ctrl-C), the process the job
// started inside the container stops too, on a local slot and over SSH.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>

#include "support/docker_engine.h"
#include "support/loopback_fleet.h"
#include "support/process.h"
#include "support/sshd.h"
#include "support/temp_dir.h"
#include "support/text.h"
#include "support/wait.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::DockerEngine;
using testing::Process;
using testing::ProcessResult;
using testing::ProcessSpec;
using testing::TempDir;

// The engine and a container named `box` of its image, removed afterwards.
class DockerJob : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    engine = DockerEngine::shared(why_not);
    RUNNER_REQUIRE_DOCKER_ENGINE(engine, why_not);
    engine->start_container(box);
  }
  void TearDown() override {
    if (engine) (void)engine->docker({"rm", "-f", box});
  }

  // `runner ARGS` on local slots, reaching the engine.
  ProcessSpec local_runner(std::vector<std::string> args) const {
    ProcessSpec spec = testing::runner_spec(std::move(args), dir.path());
    for (const auto& [name, value] : engine->env()) spec.env[name] = value;
    return spec;
  }

  // Whether the container has nothing running but its own sleep, within a
  // while (the job's processes in it get SIGTERM, SIGKILL five seconds later).
  bool container_idle() const {
    return testing::wait_until([&] { return engine->processes(box).empty(); }, 20s);
  }

  // Once `sleep 300` runs in the container, stops `run` with two Ctrl-Cs.
  void interrupt_twice_once_sleeping(Process& run) const {
    ASSERT_TRUE(testing::wait_until(
        [&] { return running_in_box().find("sleep 300") != std::string::npos; }, 20s))
        << run.peek_err();
    run.signal(SIGINT);
    ASSERT_TRUE(run.wait_for_output("interrupt again", 5s)) << run.peek_err();
    run.signal(SIGINT);
    ProcessResult r = run.wait();
    EXPECT_EQ(r.status, 130) << r.err;
  }

  std::string running_in_box() const {
    std::string text;
    for (const std::string& line : engine->processes(box)) text += line + "\n";
    return text;
  }

  TempDir dir;
  DockerEngine* engine = nullptr;
  const std::string box = "box";
};

TEST_F(DockerJob, TheOutputAndTheStatusOfTheCommandInTheContainerAreTheJobs) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml",
            "- docker exec -e WORD=inside box sh -c 'echo $WORD; echo >&2 complaint; exit 3'\n");
  ProcessResult r = testing::run_process(local_runner({"queue"}));
  EXPECT_NE(r.status, 0);
  std::string log = dir.read("queue.runner/logs/1.log");
  EXPECT_NE(log.find("inside"), std::string::npos) << log;
  EXPECT_NE(log.find("complaint"), std::string::npos) << log;
  EXPECT_NE(r.out.find("exit 3"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(container_idle()) << running_in_box();
}

TEST_F(DockerJob, ATimeoutStopsTheProcessInTheContainer) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml", "- command: docker exec box sh -c 'sleep 300'\n  timeout: 2s\n");
  ProcessResult r = testing::run_process(local_runner({"queue"}));
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("timed out"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(container_idle()) << running_in_box();
}

TEST_F(DockerJob, ASecondCtrlCStopsTheProcessInTheContainer) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml", "- docker exec box sh -c 'trap \"\" TERM; sleep 300'\n");
  Process run(local_runner({"queue"}));
  interrupt_twice_once_sleeping(run);
  EXPECT_TRUE(container_idle()) << "a process that ignores SIGTERM gets SIGKILL:\n"
                                << running_in_box();
}

TEST_F(DockerJob, KillingTheClientStopsItsProcessInTheContainer) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml", "- docker exec box sleep 300; echo client ended $?\n");
  Process run(local_runner({"queue"}));
  ASSERT_TRUE(testing::wait_until(
      [&] { return running_in_box().find("sleep 300") != std::string::npos; }, 20s))
      << run.peek_err();
  std::vector<long> clients = testing::live_processes_starting("docker exec box ");
  ASSERT_EQ(clients.size(), 1u);
  ::kill(static_cast<pid_t>(clients.front()), SIGKILL);
  ProcessResult r = run.wait();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("client ended 137"), std::string::npos) << r.out;
  EXPECT_TRUE(container_idle()) << running_in_box();
}

TEST_F(DockerJob, ResumingAKilledRunStopsTheProcessInTheContainer) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml",
            "- if [ -e tried ]; then echo second attempt; "
            "else touch tried; docker exec box sleep 300; fi\n");
  {
    Process run(local_runner({"queue"}));
    ASSERT_TRUE(testing::wait_until(
        [&] { return running_in_box().find("sleep 300") != std::string::npos; }, 20s))
        << run.peek_err();
    run.signal(SIGKILL);
    run.wait();
  }
  ASSERT_NE(running_in_box().find("sleep 300"), std::string::npos) << "the job outlives its runner";
  ProcessResult resumed = testing::run_process(local_runner({"queue", "--resume"}));
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_NE(testing::job_lines(resumed.out).find("second attempt"), std::string::npos)
      << resumed.out;
  EXPECT_TRUE(container_idle()) << running_in_box();
}

TEST_F(DockerJob, ASecondCtrlCStopsTheProcessInTheContainerOfAJobOverSsh) {
  TempDir fleet_dir;
  testing::LoopbackFleet fleet(fleet_dir);
  testing::SshdOptions options;
  for (const auto& [name, value] : engine->env())
    options.session_environment.push_back(name + "=" + value);
  if (!fleet.start(1, options)) {
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }
  fleet.write_hosts(1);
  fleet_dir.write("queue.yaml", "- docker exec box sleep 300\n");
  Process run(fleet.runner({"queue"}));
  interrupt_twice_once_sleeping(run);
  EXPECT_TRUE(container_idle()) << running_in_box();
}

}  // namespace
}  // namespace runner
