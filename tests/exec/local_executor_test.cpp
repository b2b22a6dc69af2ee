// Local slots run real processes: output, exit status, process groups and
// signals, driven through the real event loop.
#include "runner/exec/local_executor.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <optional>

#include "runner/exec/event_loop.h"
#include "runner/exec/shell_host_ops.h"
#include "support/process.h"

namespace runner {
namespace {

struct Recorder final : ExecutorEvents {
  bool ready = false;
  std::map<JobId, long> pgid;
  std::map<JobId, std::string> out, err;
  std::map<JobId, JobExit> exits;
  void host_ready(int) override { ready = true; }
  void host_failed(int, const Status&) override {}
  void task_started(TaskId j, long p) override { pgid[j] = p; }
  void task_output(TaskId j, OutputStream s, std::string_view b) override {
    (s == OutputStream::out ? out : err)[j] += b;
  }
  void task_exited(TaskId j, const JobExit& e) override { exits[j] = e; }
  void signal_failed(JobId j, int, const std::string& why) override { failed_signals[j] = why; }
  std::map<JobId, std::string> failed_signals;
};

struct Local : ::testing::Test {
  Recorder events;
  std::unique_ptr<Executor> executor = make_local_executor(0, events);
  ShellHostOps host_ops{*executor};
  EventLoop loop;

  void SetUp() override {
    loop.add(executor.get());
    loop.add(&host_ops);
    executor->connect();
    ASSERT_TRUE(events.ready);
  }
  void run_until_exited(std::size_t count) {
    run_until([&] { return events.exits.size() >= count; });
    ASSERT_EQ(events.exits.size(), count);
  }
  template <typename Done>
  void run_until(Done done) {
    auto give_up = Clock::now() + std::chrono::seconds(20);
    while (!done() && Clock::now() < give_up)
      EXPECT_TRUE(loop.run_once(std::chrono::milliseconds(100)).ok());
    ASSERT_TRUE(done());
  }
};

TEST_F(Local, StreamsOutputAndExitStatus) {
  executor->start_task(1, "echo out; echo err >&2; exit 3");
  run_until_exited(1);
  EXPECT_EQ(events.out[1], "out\n");
  EXPECT_EQ(events.err[1], "err\n");
  EXPECT_EQ(events.exits[1].code(), 3);
  EXPECT_FALSE(events.exits[1].succeeded());
  EXPECT_TRUE(executor->idle());
}

TEST_F(Local, RunsCommandsExactlyAsWritten) {
  std::string command = "printf '%s|' 'it'\"'\"'s' \"$((6*7))\" 'a\\b'\necho \"line two\"";
  executor->start_task(1, command);
  run_until_exited(1);
  EXPECT_EQ(events.out[1], "it's|42|a\\b|line two\n");
  EXPECT_TRUE(events.exits[1].succeeded());
}

TEST_F(Local, JobsRunConcurrently) {
  for (JobId id = 1; id <= 4; ++id) executor->start_task(id, "sleep 0.3; echo done");
  auto began = Clock::now();
  run_until_exited(4);
  EXPECT_LT(Clock::now() - began, std::chrono::milliseconds(1200 - 100))
      << "four 0.3 s jobs took as long as running them one after another";
  for (JobId id = 1; id <= 4; ++id) EXPECT_EQ(events.out[id], "done\n");
}

TEST_F(Local, EachJobHasItsOwnProcessGroup) {
  executor->start_task(1, "ps -o pgid= -p $$");
  executor->start_task(2, "ps -o pgid= -p $$");
  run_until_exited(2);
  EXPECT_EQ(std::stol(events.out[1]), events.pgid[1]);
  EXPECT_EQ(std::stol(events.out[2]), events.pgid[2]);
  EXPECT_NE(events.pgid[1], events.pgid[2]);
  EXPECT_NE(events.pgid[1], getpgrp());
}

TEST_F(Local, SignalReachesTheWholeGroup) {
  executor->start_task(1, "sleep 60 & sleep 60; wait");
  EXPECT_TRUE(loop.run_once(std::chrono::milliseconds(200)).ok());
  ASSERT_TRUE(events.pgid.count(1));
  long pgid = events.pgid[1];
  executor->signal_task(1, SIGTERM);
  run_until_exited(1);
  EXPECT_EQ(events.exits[1].signal(), "TERM");
  // The orphaned background sleep is reaped by init in its own time.
  for (int i = 0; i < 100 && testing::live_group_members(pgid) > 0; ++i) usleep(20000);
  EXPECT_EQ(testing::live_group_members(pgid), 0) << "a process of the job's group survived";
}

TEST_F(Local, CarriageReturnsPassThroughUntouched) {
  executor->start_task(1, "printf '10%%\\r50%%\\r100%%\\n'");
  run_until_exited(1);
  EXPECT_EQ(events.out[1], "10%\r50%\r100%\n");
}

TEST_F(Local, OutputLargerThanThePipeIsKeptWhole) {
  // Several read shares' worth, most of it still unread when the shell exits.
  executor->start_task(1, "head -c 3000000 /dev/zero | tr '\\0' x; printf end >&2");
  run_until_exited(1);
  EXPECT_EQ(events.out[1], std::string(3'000'000, 'x'));
  EXPECT_EQ(events.err[1], "end");
  EXPECT_TRUE(events.exits[1].succeeded());
}

TEST_F(Local, EndsWhenItsShellExitsThoughALeftoverHoldsItsOutput) {
  // The leftover keeps both pipes open and busy; the job still ends with its
  // shell, with everything the shell wrote.
  executor->start_task(1,
                        "(while :; do echo leftover; echo leftover >&2; done) &"
                        " sleep 0.2; echo last; echo last >&2; exit 4");
  run_until_exited(1);
  EXPECT_EQ(events.exits[1].code(), 4);
  for (const std::string& text : {events.out[1], events.err[1]}) {
    ASSERT_GE(text.size(), 5u);
    EXPECT_NE(text.find("last\n"), std::string::npos)
        << text.substr(text.size() > 200 ? text.size() - 200 : 0);
  }
  EXPECT_TRUE(executor->idle());
  // The leftover's next write after the pipes closed ended it (SIGPIPE).
  long pgid = events.pgid[1];
  for (int i = 0; i < 100 && testing::live_group_members(pgid) > 0; ++i) usleep(20000);
  EXPECT_EQ(testing::live_group_members(pgid), 0) << "the leftover writer outlived its pipes";
}

// The typed operations built on starting and signalling tasks
// (ShellHostOps), on real processes: the runner's own commands and killing
// leftovers.

TEST_F(Local, AnOwnCommandsOutputAndEndGoToItsCallerNotToTheEvents) {
  std::optional<JobExit> exit;
  std::string output;
  host_ops.run_command("echo cleaned; exit 4", [&](const JobExit& e, const std::string& o) {
    exit = e;
    output = o;
  });
  run_until([&] { return exit.has_value(); });
  EXPECT_EQ(exit->code(), 4);
  EXPECT_EQ(output, "cleaned\n");
  EXPECT_TRUE(events.pgid.empty() && events.out.empty() && events.err.empty() &&
              events.exits.empty())
      << "the scheduler saw the runner's own command as a job";
}

TEST_F(Local, KillLeftoversKillsTheJobsGroupsThatStillLiveAndLeavesOthers) {
  executor->start_task(1, "sleep 30");
  run_until([&] { return events.pgid.count(1) > 0; });
  ProcessGroup living{events.pgid[1], executor->group_mark(1)};
  executor->start_task(2, "true");  // a group that ended: a job's that ran and exited
  run_until([&] { return events.exits.count(2) > 0; });
  ProcessGroup gone{events.pgid[2], executor->group_mark(2)};
  // A job whose shell ended and left a process in its group.
  executor->start_task(4, "sleep 30 >/dev/null 2>&1 &");
  run_until([&] { return events.exits.count(4) > 0; });
  ProcessGroup left{events.pgid[4], executor->group_mark(4)};
  ASSERT_EQ(testing::live_group_members(left.id), 1);
  // A group that has a lost job's id now, but is someone else's; and one
  // recorded without a mark, by a runner that did not mark its jobs.
  testing::ProcessSpec sleeper;
  sleeper.args = {"/bin/sleep", "30"};
  testing::Process stranger(sleeper);
  ProcessGroup reused{stranger.pid(), executor->group_mark(3)};
  testing::Process unmarked_job(sleeper);
  ProcessGroup unmarked{unmarked_job.pid(), ""};

  std::optional<LeftoverCheck> check;
  host_ops.kill_leftovers({living, gone, left, reused, unmarked},
                          [&](const LeftoverCheck& c) { check = c; });
  run_until([&] { return check.has_value() && events.exits.count(1) > 0; });
  EXPECT_EQ(check->killed, (std::vector<long>{living.id, left.id, unmarked.id}));
  EXPECT_EQ(check->kept, std::vector<long>{reused.id});
  EXPECT_TRUE(check->error.empty()) << check->error;
  EXPECT_EQ(events.exits[1].signal(), "KILL");
  EXPECT_EQ(testing::live_group_members(left.id), 0);
  EXPECT_EQ(testing::live_group_members(stranger.pid()), 1);
}

TEST_F(Local, EachTasksProcessesCarryItsOwnMark) {
  executor->start_task(1, "tr '\\000' '\\n' </proc/$$/environ | grep RUNNER_JOB_MARK");
  executor->start_task(2, "printenv RUNNER_JOB_MARK");
  run_until_exited(2);
  EXPECT_EQ(events.out[1], "RUNNER_JOB_MARK=" + executor->group_mark(1) + "\n");
  EXPECT_EQ(events.out[2], executor->group_mark(2) + "\n");
  EXPECT_NE(executor->group_mark(1), executor->group_mark(2));
}

}  // namespace
}  // namespace runner
