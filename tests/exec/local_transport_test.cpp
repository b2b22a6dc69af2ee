// Local slots run real processes: output, exit status, process groups and
// signals, driven through the real event loop.
#include "runner/exec/local_transport.h"

#include <signal.h>

#include <map>

#include <gtest/gtest.h>

#include "runner/exec/event_loop.h"
#include "support/process.h"

namespace runner {
namespace {

struct Recorder final : TransportEvents {
  bool ready = false;
  std::map<JobId, long> pgid;
  std::map<JobId, std::string> out, err;
  std::map<JobId, JobExit> exits;
  void host_ready(int) override { ready = true; }
  void host_failed(int, const TransportError&) override {}
  void job_started(JobId j, long p) override { pgid[j] = p; }
  void job_output(JobId j, OutputStream s, std::string_view b) override {
    (s == OutputStream::out ? out : err)[j] += b;
  }
  void job_exited(JobId j, const JobExit& e) override { exits[j] = e; }
};

struct Local : ::testing::Test {
  Recorder events;
  std::unique_ptr<HostTransport> transport = make_local_transport(0, events);
  EventLoop loop;

  void SetUp() override {
    loop.add(transport.get());
    transport->connect();
    ASSERT_TRUE(events.ready);
  }
  void run_until_exited(std::size_t count) {
    auto give_up = Clock::now() + std::chrono::seconds(20);
    while (events.exits.size() < count && Clock::now() < give_up)
      loop.run_once(std::chrono::milliseconds(100));
    ASSERT_EQ(events.exits.size(), count);
  }
};

TEST_F(Local, StreamsOutputAndExitStatus) {
  transport->start_job(1, "echo out; echo err >&2; exit 3");
  run_until_exited(1);
  EXPECT_EQ(events.out[1], "out\n");
  EXPECT_EQ(events.err[1], "err\n");
  EXPECT_EQ(events.exits[1].code, 3);
  EXPECT_FALSE(events.exits[1].succeeded());
  EXPECT_TRUE(transport->idle());
}

TEST_F(Local, RunsCommandsExactlyAsWritten) {
  std::string command = "printf '%s|' 'it'\"'\"'s' \"$((6*7))\" 'a\\b'\necho \"line two\"";
  transport->start_job(1, command);
  run_until_exited(1);
  EXPECT_EQ(events.out[1], "it's|42|a\\b|line two\n");
  EXPECT_TRUE(events.exits[1].succeeded());
}

TEST_F(Local, JobsRunConcurrently) {
  for (JobId id = 1; id <= 4; ++id) transport->start_job(id, "sleep 0.3; echo done");
  auto began = Clock::now();
  run_until_exited(4);
  EXPECT_LT(Clock::now() - began, std::chrono::milliseconds(1200 - 100))
      << "four 0.3 s jobs took as long as running them one after another";
  for (JobId id = 1; id <= 4; ++id) EXPECT_EQ(events.out[id], "done\n");
}

TEST_F(Local, EachJobHasItsOwnProcessGroup) {
  transport->start_job(1, "ps -o pgid= -p $$");
  transport->start_job(2, "ps -o pgid= -p $$");
  run_until_exited(2);
  EXPECT_EQ(std::stol(events.out[1]), events.pgid[1]);
  EXPECT_EQ(std::stol(events.out[2]), events.pgid[2]);
  EXPECT_NE(events.pgid[1], events.pgid[2]);
  EXPECT_NE(events.pgid[1], getpgrp());
}

TEST_F(Local, SignalReachesTheWholeGroup) {
  transport->start_job(1, "sleep 60 & sleep 60; wait");
  loop.run_once(std::chrono::milliseconds(200));
  ASSERT_TRUE(events.pgid.count(1));
  long pgid = events.pgid[1];
  transport->signal_job(1, SIGTERM);
  run_until_exited(1);
  EXPECT_EQ(events.exits[1].signal, "TERM");
  // The orphaned background sleep is reaped by init in its own time.
  for (int i = 0; i < 100 && testing::live_group_members(pgid) > 0; ++i) usleep(20000);
  EXPECT_EQ(testing::live_group_members(pgid), 0) << "a process of the job's group survived";
}

TEST_F(Local, CarriageReturnsPassThroughUntouched) {
  transport->start_job(1, "printf '10%%\\r50%%\\r100%%\\n'");
  run_until_exited(1);
  EXPECT_EQ(events.out[1], "10%\r50%\r100%\n");
}

}  // namespace
}  // namespace runner
