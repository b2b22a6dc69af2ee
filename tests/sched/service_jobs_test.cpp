// Services (`service:`) against scripted executors: the jobs after one wait
// until it is ready, readiness by its output, a command or a port, its
// variables, failures, restarts, and teardown at the end of the run.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::FakeHostOps;
using testing::make_fleet;

// Whether `command` is the runner's kill of what a service's shell left of
// its process group (HostOps::kill_leftovers).
bool is_leftover_kill(const std::string& command) {
  return command == FakeHostOps::k_kill_leftovers;
}
using Harness = testing::FakeRun;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

JobSpec service(std::string command, std::string name, int line = 1) {
  JobSpec job{std::move(command), {}, 1, line};
  job.service.emplace();
  job.service->name = std::move(name);
  return job;
}

// Services last until they are stopped; other jobs take two steps.
FakeExecutor::Outcome by_command(const std::string& command) {
  FakeExecutor::Outcome outcome{.steps = 2};
  if (contains(command, "serve")) outcome.steps = 1'000'000;
  if (contains(command, "serve dht")) outcome.output = "booting\nStarted at 10.9.9.9:4242\n";
  return outcome;
}

// The tasks that got TERM (the fake ends them only at the KILL after it).
std::vector<TaskId> terminated(const FakeExecutor& executor) {
  std::vector<TaskId> tasks;
  for (auto [task, signal] : executor.signals)
    if (signal == SIGTERM) tasks.push_back(task);
  return tasks;
}

std::size_t index_of(const std::vector<std::string>& events, const std::string& prefix) {
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].rfind(prefix, 0) == 0) return i;
  return events.size();
}

// Runs `server` and a client after it; the client starts once it is ready.
void expect_client_after_ready(Harness& h, JobSpec server) {
  std::string ready = "ready " + server.command;
  h.source.jobs.push_back(std::move(server));
  h.source.add("client");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_LT(index_of(h.observer.events, ready),
            index_of(h.observer.events, "start a gpu=1 client"));
}

TEST(ServiceJobs, JobsAfterAServiceWaitForItsReadyLineAndGetItsGroups) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  for (auto* t : h.executors) t->outcome = by_command;
  JobSpec dht = service("serve dht", "dht");
  dht.service->ready_log = R"(Started at (?<addr>\S+):(\d+))";
  dht.service->after = "cleanup <<gpu>>";
  h.source.jobs.push_back(dht);
  h.source.add("client <<dht.addr>> <<dht.2>>");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  auto& events = h.observer.events;
  EXPECT_LT(index_of(events, "ready serve dht dht.addr=10.9.9.9 dht.2=4242"),
            index_of(events, "start a gpu=1 client"));
  EXPECT_EQ(h.jobs_sent(0).back(), "client 10.9.9.9 4242");
  // The client done, the service is stopped and its after command runs.
  EXPECT_EQ(terminated(*h.executors[0]), (std::vector<TaskId>{1}));
  EXPECT_EQ(h.control_sent(0).back(), "cleanup 0");
  EXPECT_EQ(h.observer.finished.size(), 2u);
}

TEST(ServiceJobs, ReadyWhenItsCommandExitsZeroOnItsHost) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  int probes = 0;
  h.executors[0]->outcome = [&](const std::string& command) {
    if (contains(command, "curl")) {
      ++probes;
      return FakeExecutor::Outcome{.exit = JobExit::exited(probes < 3 ? 7 : 0)};
    }
    return by_command(command);
  };
  JobSpec web = service("serve web", "web");
  web.service->ready = "curl -sf localhost:8080";
  expect_client_after_ready(h, web);
  EXPECT_EQ(probes, 3);
}

TEST(ServiceJobs, ReadyWhenItsPortIsOpen) {
  Harness h(make_fleet({{"a", {"7", "1"}}}));
  int surveys = 0;
  h.executors[0]->outcome = [&](const std::string& command) {
    if (command == FakeHostOps::k_survey) return FakeExecutor::Outcome{};
    return by_command(command);
  };
  h.host_ops[0]->survey = [&] {
    // 31337: listening from the second look on.
    NetworkSurvey survey;
    if (++surveys > 1) survey.ports_in_use = survey.listening_ports = {31337};
    return survey;
  };
  JobSpec server = service("serve port", "");
  server.service->ready_port = "3133<<gpu>>";  // 31337 on a gpu=7
  expect_client_after_ready(h, server);
  EXPECT_EQ(surveys, 2);
}

TEST(ServiceJobs, NotReadyWhileItsPortHoldsOnlySocketsThatDoNotListen) {
  Harness h(make_fleet({{"a", {"7", "1"}}}));
  int surveys = 0;
  h.executors[0]->outcome = [&](const std::string& command) {
    if (command == FakeHostOps::k_survey) return FakeExecutor::Outcome{};
    return by_command(command);
  };
  h.host_ops[0]->survey = [&] {
    // 31337: the last run's TIME_WAIT, then a client's socket (in use, not
    // listening), then a listener.
    NetworkSurvey survey{.ports_in_use = {31337}};
    if (surveys++ >= 2) survey.listening_ports = {31337};
    return survey;
  };
  JobSpec server = service("serve port", "");
  server.service->ready_port = "31337";
  expect_client_after_ready(h, server);
  EXPECT_EQ(surveys, 3);
}

TEST(ServiceJobs, NotReadyInTimeIsStoppedAndFailsTheRun) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  for (auto* t : h.executors) t->outcome = by_command;
  JobSpec stuck = service("serve quiet", "quiet");
  stuck.service->ready_log = "never printed";
  stuck.service->ready_timeout = 30s;
  stuck.service->ready_timeout_text = "30s";
  h.source.jobs.push_back(stuck);
  h.scheduler->start();
  EXPECT_EQ(h.run(), 1);
  bool said = std::any_of(h.observer.notices.begin(), h.observer.notices.end(), [](auto& n) {
    return contains(n, "service #1 (quiet) [a gpu=0] was not ready within 30s; stopping it");
  });
  EXPECT_TRUE(said);
  ASSERT_GE(h.executors[0]->signals.size(), 1u);
  EXPECT_EQ(h.executors[0]->signals.front().second, SIGTERM);
}

TEST(ServiceJobs, OneThatEndsEarlyFailsTheRunOrStartsAgainWithRestart) {
  for (bool restart : {false, true}) {
    Harness h(make_fleet({{"a", {"0", "1"}}}));
    int starts = 0;
    h.executors[0]->outcome = [&](const std::string& command) {
      if (contains(command, "client")) return FakeExecutor::Outcome{.steps = 20};
      if (!contains(command, "serve")) return by_command(command);
      // Its first run dies after three steps; the second lasts.
      return ++starts == 1 ? FakeExecutor::Outcome{.exit = JobExit::exited(1), .steps = 3}
                           : by_command(command);
    };
    JobSpec server = service("serve flaky", "flaky");
    server.service->restart_on_failure = restart;
    server.service->after = "after";
    h.source.jobs.push_back(server);
    h.source.add("client");
    h.source.add("late");
    h.scheduler->start();
    EXPECT_EQ(h.run(), restart ? 0 : 1) << restart;
    EXPECT_EQ(starts, restart ? 2 : 1);
    // Failed for good, it stops the run from taking more: `late` waited
    // for the client's slot, and does not run.
    auto sent = h.jobs_sent(0);
    EXPECT_EQ(std::count(sent.begin(), sent.end(), "late"), restart ? 1 : 0) << restart;
    bool said = std::any_of(h.observer.notices.begin(), h.observer.notices.end(), [&](auto& n) {
      return contains(n, restart ? "service #1 (flaky) [a gpu=0] ended: exit 1; starting it again"
                                 : "service #1 (flaky) [a gpu=0] ended before the run did: exit 1");
    });
    EXPECT_TRUE(said) << restart;
    // Its after command runs once, when it is over for good.
    auto control = h.control_sent(0);
    std::erase_if(control, is_leftover_kill);
    EXPECT_EQ(control, (std::vector<std::string>{"after"})) << restart;
  }
}

TEST(ServiceJobs, AreStoppedTheLastStartedFirstEachAfterTheOneBefore) {
  Harness h(make_fleet({{"a", {"0", "1", "2"}}}));
  std::vector<std::string> log;
  h.executors[0]->log = &log;
  for (auto* t : h.executors) t->outcome = by_command;
  h.source.jobs.push_back(service("serve coordinator", "coordinator"));
  h.source.jobs.push_back(service("serve worker", "worker"));
  h.source.add("client");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  // The worker (task 2) goes first; the coordinator (task 1) once it ended.
  EXPECT_EQ(terminated(*h.executors[0]), (std::vector<TaskId>{2, 1}));
  ASSERT_GE(h.executors[0]->signals.size(), 2u);
  EXPECT_EQ(h.executors[0]->signals[1], (std::pair<TaskId, int>{2, SIGKILL}));
}

TEST(ServiceJobs, TheirEndsSayTheRunnerStoppedThemOrThatTheyWereNotReadyInTime) {
  Harness h(make_fleet({{"a", {"0", "1"}}}));
  for (auto* t : h.executors) t->outcome = by_command;
  JobSpec late = service("serve quiet", "quiet");
  late.service->ready_log = "never printed";
  late.service->ready_timeout = 30s;
  h.source.jobs.push_back(service("serve web", "web"));
  h.source.jobs.push_back(late);
  h.scheduler->start();
  EXPECT_EQ(h.run(), 1);
  // Torn down at the run's end: cancelled, which the journal records.
  ASSERT_EQ(h.ends_of(1).size(), 1u);
  EXPECT_TRUE(h.ends_of(1)[0].cancelled);
  ASSERT_EQ(h.ends_of(2).size(), 1u);
  EXPECT_TRUE(h.ends_of(2)[0].timed_out);
  EXPECT_FALSE(h.ends_of(2)[0].cancelled);
}

TEST(ServiceJobs, StopServiceStopsTheNamedOneAsTheRunsEndWouldAndTheRunGoesOn) {
  Harness h(make_fleet({{"a", {"0", "1", "2"}}}));
  h.executors[0]->outcome = [](const std::string& command) {
    if (contains(command, "client")) return FakeExecutor::Outcome{.steps = 200};
    return by_command(command);
  };
  JobSpec coordinator = service("serve coordinator", "coordinator");
  coordinator.service->after = "after coordinator";
  h.source.jobs.push_back(coordinator);
  h.source.jobs.push_back(service("serve worker", "worker"));
  h.source.add("client");
  h.scheduler->start();
  for (int i = 0; i < 20; ++i) h.tick();
  ASSERT_EQ(h.jobs_sent(0).size(), 3u);
  EXPECT_EQ(h.scheduler->stop_service("nobody", h.now), 0u);
  EXPECT_EQ(h.scheduler->stop_service("coordinator", h.now), 1u);
  EXPECT_EQ(terminated(*h.executors[0]), (std::vector<TaskId>{1}));
  EXPECT_EQ(h.run(), 0);
  // Stopped, not failed; its after command ran; then, at the end, the worker.
  ASSERT_EQ(h.ends_of(1).size(), 1u);
  EXPECT_TRUE(h.ends_of(1)[0].cancelled);
  // What its shell left of its group is killed, then its after command runs.
  auto control = h.control_sent(0);
  ASSERT_GE(control.size(), 2u);
  EXPECT_TRUE(is_leftover_kill(control[0])) << control[0];
  ASSERT_GE(h.host_ops[0]->leftover_checks.size(), 1u);
  EXPECT_EQ(h.host_ops[0]->leftover_checks[0],
            (std::vector<ProcessGroup>{{1001, h.executors[0]->group_mark(1)}}));
  EXPECT_EQ(control[1], "after coordinator");
  EXPECT_EQ(terminated(*h.executors[0]), (std::vector<TaskId>{1, 2}));
  auto said = [&](const std::string& part) {
    return std::any_of(h.observer.notices.begin(), h.observer.notices.end(),
                       [&](auto& n) { return contains(n, part); });
  };
  EXPECT_TRUE(said("asked to stop the service nobody, but none of that name runs"));
  EXPECT_TRUE(said("stopping service #1 (coordinator) [a gpu=0], as asked"));
}

TEST(ServiceJobs, BroadcastStartsOneOnEverySlotAndTheNextStepWaitsForAllToBeReady) {
  Harness h(make_fleet({{"a", {"0"}}, {"b", {"0"}}}), SchedulerOptions{.mode = Mode::broadcast});
  for (auto* t : h.executors) t->outcome = by_command;
  JobSpec dht = service("serve dht", "dht");
  dht.service->ready_log = R"(Started at (\S+))";
  h.source.jobs.push_back(dht);
  h.source.add("bench <<dht.1>>");
  h.scheduler->start();
  EXPECT_EQ(h.run(), 0);
  EXPECT_EQ(h.jobs_sent(0), (std::vector<std::string>{"serve dht", "bench 10.9.9.9:4242"}));
  EXPECT_EQ(h.jobs_sent(1), (std::vector<std::string>{"serve dht", "bench 10.9.9.9:4242"}));
  EXPECT_EQ(terminated(*h.executors[0]).size(), 1u);
  EXPECT_EQ(terminated(*h.executors[1]).size(), 1u);
}

}  // namespace
}  // namespace runner
