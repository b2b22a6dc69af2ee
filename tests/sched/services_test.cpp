// The run's services on their own: readiness as it starts, the probes of
// its checks on its host, its ready_log's variables, stops at its
// ready_timeout, teardown the last started first, `runner stop`, and what a
// service's end means (stopped by the runner, restarted, failed) and
// leaves to do on its host.
#include "runner/sched/services.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::make_fleet;
using testing::RecordingObserver;
using namespace std::chrono_literals;
using Action = ReadinessStep::Action;

const Clock::time_point t0 = Clock::time_point{} + 1h;

// `service: db` with `key` (ready, ready_port, ...) set to `value`.
ServiceSpec db_with(std::string ServiceSpec::*key, std::string value) {
  ServiceSpec spec{"db"};
  spec.*key = std::move(value);
  return spec;
}

// Services on host a's slot "a gpu=7", their jobs as the scheduler holds
// them.
struct ServicesRun {
  Fleet fleet = make_fleet({{"a", {"7"}}});
  RunningJobs jobs;
  RecordingObserver observer;
  testing::FakeRunLog run_log{observer.events};
  Services services{fleet, jobs, run_log, observer};

  // Service job `id`, `service: NAME` by default, launched at t0.
  Job& launch(JobId id, ServiceSpec spec = ServiceSpec{"db"}) {
    Job job;
    job.id = id;
    job.spec.command = "serve";
    job.spec.service = std::move(spec);
    Task task;
    task.slots = {0};
    task.label = "a gpu=7";
    task.command = "serve";
    job.tasks.push_back(task);
    Running running;
    running.start = t0;
    job.state = running;
    Job& launched = jobs.add(std::move(job));
    services.started(launched, t0);
    return launched;
  }
  // `job`'s process started at `at`: true when it is ready by that.
  bool start(Job& job, Clock::time_point at = t0) {
    job.tasks.front().group = ProcessGroup{1000 + static_cast<long>(job.id), ""};
    return services.process_started(job, at);
  }
  // `job` ended with `exit`, as judge_end said it (`again`: it would run
  // again); it leaves the scheduler's running jobs.
  std::optional<ServiceCleanup> end(Job& job, JobEnd& end, bool stopping = false) {
    job.tasks.front().exit = end.exit;
    std::optional<Job> ended = jobs.remove(job.id);
    return services.ended(*ended, stopping, end);
  }
  bool said(const std::string& part) const {
    for (const std::string& notice : observer.notices)
      if (notice.find(part) != std::string::npos) return true;
    return false;
  }
};

TEST(Services, WithoutReadinessChecksItIsReadyOnceItsProcessStarts) {
  ServicesRun r;
  Job& job = r.launch(1);
  EXPECT_EQ(r.services.running(), std::vector<JobId>{1});
  EXPECT_TRUE(r.services.starting());
  EXPECT_TRUE(r.services.readiness_steps(t0).empty());
  EXPECT_EQ(r.services.next_due(), t0 + k_default_ready_timeout);

  EXPECT_TRUE(r.start(job));
  EXPECT_FALSE(r.services.starting());
  EXPECT_EQ(r.observer.events,
            (std::vector<std::string>{"journal service_ready #1", "ready serve"}));
  EXPECT_FALSE(r.services.next_due());
}

TEST(Services, EachReadinessCheckIsProbedOnItsHostOnceItStarted) {
  ServicesRun r;
  ServiceSpec spec{"db"};
  spec.ready = "pg_isready -p 5<<gpu>>";
  spec.ready_port = "543<<gpu>>";
  Job& job = r.launch(1, spec);
  EXPECT_TRUE(r.services.readiness_steps(t0).empty()) << "not started yet";
  EXPECT_FALSE(r.start(job));

  std::vector<ReadinessStep> steps = r.services.readiness_steps(t0);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].action, Action::run_command);
  EXPECT_EQ(steps[0].command, "pg_isready -p 57");
  EXPECT_EQ(steps[1].action, Action::look_for_port);
  EXPECT_EQ(steps[1].port, 5437);
  EXPECT_TRUE(r.services.readiness_steps(t0 + 2s).empty()) << "its probes are in flight";

  EXPECT_FALSE(r.services.probe_answered(1, Action::run_command, true, t0 + 2s));
  EXPECT_TRUE(r.services.starting());
  EXPECT_TRUE(r.services.probe_answered(1, Action::look_for_port, true, t0 + 2s));
  EXPECT_FALSE(r.services.starting());
}

TEST(Services, AProbeThatFailedRunsAgainASecondLater) {
  ServicesRun r;
  Job& job = r.launch(1, db_with(&ServiceSpec::ready, "pg_isready"));
  r.start(job);
  ASSERT_EQ(r.services.readiness_steps(t0).size(), 1u);
  EXPECT_FALSE(r.services.probe_answered(1, Action::run_command, false, t0 + 100ms));
  EXPECT_TRUE(r.services.readiness_steps(t0 + 500ms).empty());
  EXPECT_EQ(r.services.next_due(), t0 + 1s);
  EXPECT_EQ(r.services.readiness_steps(t0 + 1s).size(), 1u);
}

TEST(Services, ItsReadyLogGivesVariablesAndTheFirstServiceToGiveANameKeepsIt) {
  ServicesRun r;
  ServiceSpec db{"db"}, again{"db"};
  db.ready_log = "listening on (?<port>\\d+)";
  again.ready_log = "listening on (?<port>\\d+) and (?<admin>\\d+)";
  Job& first = r.launch(1, db);
  Job& second = r.launch(2, again);
  r.start(first);
  r.start(second);
  EXPECT_FALSE(r.services.output(first, "listening", t0));
  EXPECT_TRUE(r.services.output(first, " on 5432\n", t0)) << "matched across outputs";
  EXPECT_TRUE(r.services.output(second, "listening on 6543 and 8080\n", t0));
  EXPECT_EQ(r.services.variables_for(first, first.tasks.front()),
            (Params{{"db.port", "5432"}, {"db.admin", "8080"}}));
}

TEST(Services, OneNotReadyInItsTimeIsStoppedAsTimedOut) {
  ServicesRun r;
  ServiceSpec spec{"db"};
  spec.ready_log = "never printed";
  spec.ready_timeout = 30s;
  spec.ready_timeout_text = "30s";
  Job& job = r.launch(1, spec);
  r.start(job);
  EXPECT_TRUE(r.services.readiness_steps(t0 + 29s).empty());
  std::vector<ReadinessStep> steps = r.services.readiness_steps(t0 + 30s);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].action, Action::stop);
  EXPECT_TRUE(steps[0].timed_out);
  EXPECT_TRUE(r.said("service #1 (db) [a gpu=7] was not ready within 30s; stopping it"));

  JobEnd end{JobExit::killed("TERM"), std::nullopt};
  r.end(job, end);
  EXPECT_TRUE(end.stops_run);
  EXPECT_FALSE(r.said("ended before the run did")) << "its stop was said already";
}

TEST(Services, AReadyPortThatIsNoPortStopsIt) {
  ServicesRun r;
  Job& job = r.launch(1, db_with(&ServiceSpec::ready_port, "port<<gpu>>"));
  r.start(job);
  std::vector<ReadinessStep> steps = r.services.readiness_steps(t0);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].action, Action::stop);
  EXPECT_FALSE(steps[0].timed_out);
  EXPECT_TRUE(r.said("its ready_port `port<<gpu>>` is not a port on a gpu=7"));
}

TEST(Services, TheLastStartedIsTornDownFirstEachAfterTheOneAfterItEnded) {
  ServicesRun r;
  Job& coordinator = r.launch(1);
  Job& server = r.launch(2);
  EXPECT_FALSE(r.services.tearing_down());
  EXPECT_EQ(r.services.next_to_tear_down(), JobId{2});
  EXPECT_TRUE(r.services.tearing_down());
  EXPECT_FALSE(r.services.next_to_tear_down()) << "it is stopping";

  JobEnd end{JobExit::killed("TERM"), std::nullopt};
  r.end(server, end);
  EXPECT_TRUE(end.stopped_by_runner);
  EXPECT_FALSE(end.failed());
  EXPECT_EQ(r.services.next_to_tear_down(), JobId{1});
  r.end(coordinator, end);
  EXPECT_FALSE(r.services.next_to_tear_down());
  EXPECT_FALSE(r.services.any());
}

TEST(Services, StopAskedByNameOrIdTearsDownEachOnce) {
  ServicesRun r;
  r.launch(1);
  r.launch(2, ServiceSpec{"cache"});
  StopRequest asked = r.services.stop_asked("db");
  EXPECT_EQ(asked.named, 1u);
  EXPECT_EQ(asked.to_stop, std::vector<JobId>{1});
  EXPECT_TRUE(r.said("stopping service #1 (db) [a gpu=7], as asked"));
  asked = r.services.stop_asked("#1");
  EXPECT_EQ(asked.named, 1u);
  EXPECT_TRUE(asked.to_stop.empty()) << "it is stopping already";
  asked = r.services.stop_asked("web");
  EXPECT_EQ(asked.named, 0u);
  EXPECT_TRUE(r.said("asked to stop the service web, but none of that name runs"));
}

TEST(Services, OneThatEndsOnItsOwnFailsAndStopsTheRunAndNeverRunsAgainByItself) {
  ServicesRun r;
  Job& job = r.launch(1, db_with(&ServiceSpec::after, "cleanup <<gpu>>"));
  r.start(job);
  JobEnd end{JobExit::exited(1), job};  // as judge_end would retry a failure
  std::optional<ServiceCleanup> cleanup = r.end(job, end);
  EXPECT_FALSE(end.again);
  EXPECT_TRUE(end.failed());
  EXPECT_TRUE(end.stops_run);
  EXPECT_TRUE(r.services.running().empty());
  EXPECT_TRUE(r.said("service #1 (db) [a gpu=7] ended before the run did: exit 1"));
  EXPECT_TRUE(r.said("a service failed; no more jobs start"));
  ASSERT_TRUE(cleanup);
  EXPECT_EQ(cleanup->host, 0);
  EXPECT_EQ(cleanup->leftovers, (ProcessGroup{1001, ""})) << "it ended on its host";
  EXPECT_EQ(cleanup->after, "cleanup 7");
}

TEST(Services, WithRestartOnFailureItRunsAgainAsItsNextAttempt) {
  ServicesRun r;
  ServiceSpec spec{"db"};
  spec.restart_on_failure = true;
  Job& job = r.launch(1, spec);
  job.attempt = 2;
  JobEnd end{JobExit::exited(1), std::nullopt};
  EXPECT_FALSE(r.end(job, end)) << "nothing to clean up after";
  ASSERT_TRUE(end.again);
  EXPECT_FALSE(end.stops_run);
  EXPECT_EQ(end.again->id, JobId{1});
  EXPECT_EQ(end.again->attempt, 3);
  EXPECT_TRUE(end.again->tasks.empty());
  EXPECT_TRUE(std::holds_alternative<Queued>(end.again->state));
}

TEST(Services, NoRestartOnceTheRunStopsOrWhenItWasNotReadyInTime) {
  ServiceSpec spec{"db"};
  spec.restart_on_failure = true;
  {
    ServicesRun r;
    Job& job = r.launch(1, spec);
    JobEnd end{JobExit::exited(1), std::nullopt};
    ASSERT_TRUE(r.end(job, end, true));
    EXPECT_FALSE(end.again);
    EXPECT_TRUE(end.failed());
  }
  {
    ServicesRun r;
    spec.ready_log = "never printed";
    Job& job = r.launch(1, spec);
    r.start(job);
    ASSERT_EQ(r.services.readiness_steps(t0 + k_default_ready_timeout).size(), 1u);
    JobEnd end{JobExit::killed("TERM"), std::nullopt};
    ASSERT_TRUE(r.end(job, end));
    EXPECT_FALSE(end.again);
    EXPECT_TRUE(end.failed());
  }
}

TEST(Services, OneTheRunnerCancelledIsStoppedNotFailed) {
  ServicesRun r;
  Job& job = r.launch(1);
  job.running().cancelled = true;
  JobEnd end{JobExit::exited(143), std::nullopt};
  std::optional<ServiceCleanup> cleanup = r.end(job, end);
  EXPECT_TRUE(end.stopped_by_runner);
  EXPECT_FALSE(end.stops_run);
  EXPECT_FALSE(end.failed());
  ASSERT_TRUE(cleanup);
  EXPECT_FALSE(cleanup->leftovers) << "its process never started";
  EXPECT_FALSE(cleanup->after);
}

}  // namespace
}  // namespace runner
