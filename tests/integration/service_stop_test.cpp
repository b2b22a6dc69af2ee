// `runner stop NAME` with the real binary on local slots: from another
// process, it stops a service of a live run as the run's end would (its
// after: command runs), waits until the journal records the end, and the
// run goes on.
#include <gtest/gtest.h>
#include <unistd.h>

#include "support/process.h"
#include "support/temp_dir.h"

namespace runner {
namespace {

using namespace std::chrono_literals;
using testing::ProcessResult;
using testing::TempDir;

struct ServiceStop : ::testing::Test {
  TempDir dir;
  // Unique, so that a leftover of this test is found by its command line.
  std::string marker = "sleep " + std::to_string(700 + getpid() % 500) + ".75";

  void SetUp() override {
    std::string d = dir.path();
    dir.write("hosts.yaml", "- hostname: localhost\n  slots: 2\n");
    // The client ends once the service's after: command ran.
    dir.write("queue.yaml",
              "- command: echo listening on port 4242; exec " + marker + "\n"
              "  service: db\n"
              "  ready_log: 'listening on port (?<port>\\d+)'\n"
              "  after: touch " + d + "/after-db\n"
              "- command: while [ ! -e " + d + "/after-db ]; do sleep 0.1; done; "
              "echo the db on <<db.port>> is gone\n");
  }

  testing::ProcessSpec spec(std::vector<std::string> args) {
    return testing::runner_spec(std::move(args), dir.path());
  }
};

TEST_F(ServiceStop, StopsTheNamedServiceOfALiveRunWhichThenGoesOn) {
  testing::Process run(spec({"queue"}));
  ASSERT_TRUE(run.wait_for_output("is ready after", 20s)) << run.peek_err();

  ProcessResult unknown = testing::run_process(spec({"stop", "nobody"}));
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("no running service of run "), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("is named nobody; running: db"), std::string::npos) << unknown.err;

  ProcessResult stop = testing::run_process(spec({"stop", "db"}));
  EXPECT_EQ(stop.status, 0) << stop.err;
  EXPECT_NE(stop.err.find("runner: service #1 (db) [localhost #0] stopped: cancelled"),
            std::string::npos)
      << stop.err;

  ProcessResult ran = run.wait();
  EXPECT_EQ(ran.status, 0) << ran.err;
  EXPECT_NE(ran.err.find("stopping service #1 (db) [localhost #0], as asked"), std::string::npos)
      << ran.err;
  EXPECT_EQ(testing::live_processes_running(marker), 0);
  EXPECT_NE(dir.read("queue.runner/logs/2.log").find("the db on 4242 is gone"),
            std::string::npos);

  ProcessResult status = testing::run_process(spec({"status"}));
  EXPECT_NE(status.out.find("stopped at "), std::string::npos) << status.out;

  ProcessResult late = testing::run_process(spec({"stop", "db"}));
  EXPECT_EQ(late.status, 2);
  EXPECT_NE(late.err.find("no run is going on here"), std::string::npos) << late.err;
}

}  // namespace
}  // namespace runner
