// Jobs that run `docker exec`, against a real Docker engine: when runner
// stops such a job (its timeout, a second Ctrl-C), the process the job
// started inside the container stops too, on a local slot and over SSH.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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
  // Of this test process: tests run side by side, each with an engine of its own.
  const std::string box = "box-" + std::to_string(::getpid());
};

TEST_F(DockerJob, TheOutputAndTheStatusOfTheCommandInTheContainerAreTheJobs) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml", "- docker exec -e WORD=inside " + box +
                              " sh -c 'echo $WORD; echo >&2 complaint; exit 3'\n");
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
  dir.write("queue.yaml", "- command: docker exec " + box + " sh -c 'sleep 300'\n  timeout: 2s\n");
  ProcessResult r = testing::run_process(local_runner({"queue"}));
  EXPECT_NE(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("timed out"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(container_idle()) << running_in_box();
}

TEST_F(DockerJob, ASecondCtrlCStopsTheProcessInTheContainer) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml", "- docker exec " + box + " sh -c 'trap \"\" TERM; sleep 300'\n");
  Process run(local_runner({"queue"}));
  interrupt_twice_once_sleeping(run);
  EXPECT_TRUE(container_idle()) << "a process that ignores SIGTERM gets SIGKILL:\n"
                                << running_in_box();
}

TEST_F(DockerJob, KillingTheClientStopsItsProcessInTheContainer) {
  dir.write("hosts.yaml", "- hostname: localhost\n  slots: 1\n");
  dir.write("queue.yaml", "- docker exec " + box + " sleep 300; echo client ended $?\n");
  Process run(local_runner({"queue"}));
  ASSERT_TRUE(testing::wait_until(
      [&] { return running_in_box().find("sleep 300") != std::string::npos; }, 20s))
      << run.peek_err();
  std::vector<long> clients = testing::live_processes_starting("docker exec " + box + " ");
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
            "else touch tried; docker exec " +
                box + " sleep 300; fi\n");
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

// Jobs over SSH: loopback sshd hosts whose sessions reach the engine.
class DockerJobOverSsh : public DockerJob {
 protected:
  void start_hosts(int n) {
    testing::SshdOptions options;
    for (const auto& [name, value] : engine->env())
      options.session_environment.push_back(name + "=" + value);
    if (fleet.start(n, options)) return;
    if (testing::sshd_required()) FAIL() << "sshd is missing but CI=true requires it";
    GTEST_SKIP() << "no sshd on this machine";
  }

  testing::LoopbackFleet fleet{dir};
};

TEST_F(DockerJobOverSsh, ASecondCtrlCStopsTheProcessInTheContainer) {
  if (!engine) return;
  start_hosts(1);
  if (fleet.size() < 1) return;
  fleet.write_hosts(1);
  dir.write("queue.yaml", "- docker exec " + box + " sleep 300\n");
  Process run(fleet.runner({"queue"}));
  interrupt_twice_once_sleeping(run);
  EXPECT_TRUE(container_idle()) << running_in_box();
}

TEST_F(DockerJobOverSsh, ALostHostsCleanupStopsTheProcessInTheContainer) {
  if (!engine) return;
  start_hosts(2);
  if (fleet.size() < 2) return;
  dir.write("hosts.yaml", "- " + fleet.name(0) + "\n- " + fleet.name(1) + "\n");
  // The first attempt of job 0 hangs in the container; the other jobs are
  // short, enough of them that the lost host is back before the queue runs dry.
  dir.write("queue.yaml", "- command: if [ <<i>> = 0 ] && ! [ -e " + dir.file("tried") +
                              " ]; then touch " + dir.file("tried") + "; docker exec " + box +
                              " sleep 300; fi; sleep 0.3; echo job <<i>>\n"
                              "  i: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]\n");
  Process run(fleet.runner({"queue"}));
  ASSERT_TRUE(testing::wait_until(
      [&] { return running_in_box().find("sleep 300") != std::string::npos; }, 20s))
      << run.peek_err();
  // Whichever host got job 0 drops off the network; its processes go on.
  int lost = -1;
  std::istringstream journal(dir.read("queue.runner/journal.jsonl"));
  for (std::string line; std::getline(journal, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    if (record["event"] == "job_start" && record["job"] == 1)
      lost = record["host"] == fleet.name(0) ? 0 : 1;
  }
  ASSERT_GE(lost, 0);
  fleet.host(lost).cut_network();
  ASSERT_TRUE(run.wait_for_output("running it again", 30s)) << run.peek_err();
  fleet.host(lost).restart();
  ProcessResult r = run.wait();
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("killed 1 leftover"), std::string::npos) << r.err;
  EXPECT_TRUE(container_idle()) << running_in_box();
}

}  // namespace
}  // namespace runner
