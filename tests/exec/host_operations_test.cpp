// The typed operations every host transport offers on top of starting and
// signalling jobs: the runner's own commands and killing leftovers. Driven
// through the local transport and the real event loop.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <optional>

#include "runner/exec/event_loop.h"
#include "runner/exec/local_executor.h"

namespace runner {
namespace {

struct Seen final : ExecutorEvents {
  std::map<JobId, long> pgid;
  std::map<JobId, std::string> output;
  std::map<JobId, JobExit> exits;
  void host_ready(int) override {}
  void host_failed(int, const TransportError&) override {}
  void task_started(TaskId j, long p) override { pgid[j] = p; }
  void task_output(TaskId j, OutputStream, std::string_view b) override { output[j] += b; }
  void task_exited(TaskId j, const JobExit& e) override { exits[j] = e; }
  void signal_failed(JobId, int, const std::string&) override {}
};

struct HostOperations : ::testing::Test {
  Seen events;
  std::unique_ptr<Executor> transport = make_local_executor(0, events);
  EventLoop loop;

  void SetUp() override {
    loop.add(transport.get());
    transport->connect();
  }
  template <typename Done>
  void run_until(Done done) {
    auto give_up = Clock::now() + std::chrono::seconds(20);
    while (!done() && Clock::now() < give_up) loop.run_once(std::chrono::milliseconds(100));
    ASSERT_TRUE(done());
  }
};

TEST_F(HostOperations, AnOwnCommandsOutputAndEndGoToItsCallerNotToTheEvents) {
  std::optional<JobExit> exit;
  std::string output;
  transport->run_command("echo cleaned; exit 4", [&](const JobExit& e, const std::string& o) {
    exit = e;
    output = o;
  });
  run_until([&] { return exit.has_value(); });
  EXPECT_EQ(exit->code, 4);
  EXPECT_EQ(output, "cleaned\n");
  EXPECT_TRUE(events.pgid.empty() && events.output.empty() && events.exits.empty())
      << "the scheduler saw the runner's own command as a job";
}

TEST_F(HostOperations, KillLeftoversKillsTheGroupsThatStillLiveAndSaysWhich) {
  transport->start_task(1, "sleep 30");
  run_until([&] { return events.pgid.count(1) > 0; });
  long living = events.pgid[1];
  long gone = 0;  // a group that ended: a job's that ran and exited
  transport->start_task(2, "true");
  run_until([&] { return events.exits.count(2) > 0; });
  gone = events.pgid[2];

  std::optional<LeftoverCheck> check;
  transport->kill_leftovers({living, gone}, [&](const LeftoverCheck& c) { check = c; });
  run_until([&] { return check.has_value() && events.exits.count(1) > 0; });
  EXPECT_EQ(check->killed, std::vector<long>{living});
  EXPECT_TRUE(check->error.empty()) << check->error;
  EXPECT_EQ(events.exits[1].signal, "KILL");
}

}  // namespace
}  // namespace runner
