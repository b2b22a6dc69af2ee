// The run's services on their own: readiness as it starts, the variables
// of ready services, teardown the last started first, and what a
// service's end means (stopped, restarted, failed).
#include "runner/sched/services.h"

#include <gtest/gtest.h>

#include "sched/fakes.h"

namespace runner {
namespace {

using namespace std::chrono_literals;

const Clock::time_point t0 = Clock::time_point{} + 1h;

// A running service job `id`, with `spec` (a `service: NAME` by default).
Job service_job(JobId id, ServiceSpec spec = ServiceSpec{"db"}) {
  Job job;
  job.id = id;
  job.spec.command = "serve";
  job.spec.service = std::move(spec);
  job.state = Running{};
  return job;
}

// `job` started with `services`, as the scheduler launches it.
Job& launched(Services& services, Job& job) {
  job.running().service = services.started(job, t0);
  return job;
}

TEST(Services, AServiceWithoutReadinessChecksHasPassedThemAll) {
  Services services;
  Job job = service_job(1);
  const ServiceRun& run = *launched(services, job).running().service;
  EXPECT_TRUE(run.command_passed);
  EXPECT_TRUE(run.port_passed);
  EXPECT_TRUE(run.log_passed);
  EXPECT_FALSE(run.ready);
  EXPECT_EQ(run.ready_by, t0 + k_default_ready_timeout);
  EXPECT_EQ(services.running(), std::vector<JobId>{1});
}

TEST(Services, EachReadinessCheckItHasWaitsToPass) {
  Services services;
  ServiceSpec spec{"db"};
  spec.ready = "pg_isready";
  spec.ready_port = "5432";
  spec.ready_log = "listening on (?<port>\\d+)";
  spec.ready_timeout = 30s;
  Job job = service_job(1, spec);
  const ServiceRun& run = *launched(services, job).running().service;
  EXPECT_FALSE(run.command_passed);
  EXPECT_FALSE(run.port_passed);
  EXPECT_FALSE(run.log_passed);
  EXPECT_TRUE(run.log_pattern.has_value());
  EXPECT_EQ(run.ready_by, t0 + 30s);
}

TEST(Services, TheFirstReadyServiceToGiveAVariableKeepsIt) {
  Services services;
  ServiceRun first, second;
  first.variables = {{"db.port", "5432"}};
  second.variables = {{"db.port", "6543"}, {"cache.port", "6379"}};
  services.ready(first);
  services.ready(second);
  EXPECT_EQ(services.variables(), (Params{{"db.port", "5432"}, {"cache.port", "6379"}}));
}

TEST(Services, TheLastStartedIsTornDownFirst) {
  Services services;
  Job coordinator = service_job(1), server = service_job(2);
  launched(services, coordinator);
  launched(services, server);
  EXPECT_FALSE(services.tearing_down());
  EXPECT_EQ(services.next_to_tear_down(), JobId{2});
  EXPECT_TRUE(services.tearing_down());

  JobEnd end{JobExit::exited(0), std::nullopt};
  server.running().service->torn_down = true;
  EXPECT_EQ(services.ended(server, false, end), ServiceEnd::stopped);
  EXPECT_EQ(services.next_to_tear_down(), JobId{1});
  coordinator.running().service->torn_down = true;
  EXPECT_EQ(services.ended(coordinator, false, end), ServiceEnd::stopped);
  EXPECT_FALSE(services.next_to_tear_down());
  EXPECT_FALSE(services.any());
}

TEST(Services, OneThatEndsOnItsOwnFailsTheRunAndNeverRunsAgainByItself) {
  Services services;
  Job job = service_job(1);
  launched(services, job);
  JobEnd end{JobExit::exited(1), job};  // as judge_end would retry a failure
  EXPECT_EQ(services.ended(job, false, end), ServiceEnd::failed);
  EXPECT_FALSE(end.again);
  EXPECT_TRUE(services.running().empty());
}

TEST(Services, WithRestartOnFailureItRunsAgainAsItsNextAttempt) {
  Services services;
  ServiceSpec spec{"db"};
  spec.restart_on_failure = true;
  Job job = service_job(1, spec);
  job.attempt = 2;
  job.tasks.push_back(Task{});
  launched(services, job);
  JobEnd end{JobExit::exited(1), std::nullopt};
  EXPECT_EQ(services.ended(job, false, end), ServiceEnd::restarted);
  ASSERT_TRUE(end.again);
  EXPECT_EQ(end.again->id, JobId{1});
  EXPECT_EQ(end.again->attempt, 3);
  EXPECT_TRUE(end.again->tasks.empty());
  EXPECT_TRUE(std::holds_alternative<Queued>(end.again->state));
}

TEST(Services, NoRestartOnceTheRunStopsOrWhenItWasNotReadyInTime) {
  ServiceSpec spec{"db"};
  spec.restart_on_failure = true;
  {
    Services services;
    Job job = service_job(1, spec);
    launched(services, job);
    JobEnd end{JobExit::exited(1), std::nullopt};
    EXPECT_EQ(services.ended(job, true, end), ServiceEnd::failed);
  }
  {
    Services services;
    Job job = service_job(1, spec);
    launched(services, job).running().service->not_ready_in_time = true;
    JobEnd end{JobExit::exited(1), std::nullopt};
    EXPECT_EQ(services.ended(job, false, end), ServiceEnd::failed);
  }
}

TEST(Services, OneTheRunnerCancelledIsStopped) {
  Services services;
  Job job = service_job(1);
  launched(services, job).running().cancelled = true;
  JobEnd end{JobExit::exited(143), std::nullopt};
  EXPECT_EQ(services.ended(job, false, end), ServiceEnd::stopped);
}

}  // namespace
}  // namespace runner
