// `every: host` in queue mode against scripted executors: a copy of the
// job on each host, taken together once each host has its slots free, FIFO
// behind it, services of that kind, and a copy that runs again only where
// it ran.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "sched/fakes.h"

namespace runner {
namespace {

using testing::FakeExecutor;
using testing::make_fleet;
using Campaign = testing::FakeRun;
using namespace std::chrono_literals;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

JobSpec on_every_host(std::string command, int slots = 1) {
  JobSpec job{std::move(command), {}, slots, 1};
  job.every_host = true;
  return job;
}

FakeExecutor::Outcome lasting(int steps) { return FakeExecutor::Outcome{.steps = steps}; }

TEST(EveryHost, RunsOneCopyOnEachHostEachAJobOfItsOwn) {
  Campaign r(make_fleet({{"a", {"0", "1"}}, {"b", {"0", "1"}}, {"c", {"5"}}}));
  r.source.jobs.push_back(on_every_host("look <<hostname>> <<gpu>>"));
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"look a 0"}));
  EXPECT_EQ(r.jobs_sent(1), (std::vector<std::string>{"look b 0"}));
  EXPECT_EQ(r.jobs_sent(2), (std::vector<std::string>{"look c 5"}));
  ASSERT_EQ(r.observer.finished.size(), 3u);
  std::vector<JobId> ids;
  for (const auto& [job, exit] : r.observer.finished) ids.push_back(job.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<JobId>{1, 2, 3}));
}

TEST(EveryHost, WaitsUntilEveryHostHasItsSlotsFreeAndWhatFollowsWaitsBehindIt) {
  Campaign r(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  for (auto* t : r.executors)
    t->outcome = [](const std::string& command) {
      return lasting(contains(command, "long") ? 30 : 2);
    };
  r.source.add("long");
  r.source.jobs.push_back(on_every_host("everywhere"));
  r.source.add("after");
  r.scheduler->start();
  r.tick();
  r.tick();
  r.tick();
  // b is free, but a still runs `long`: nothing more has started.
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"long"}));
  EXPECT_TRUE(r.jobs_sent(1).empty());
  EXPECT_EQ(r.run(), 0);
  ASSERT_GE(r.jobs_sent(0).size(), 2u);
  EXPECT_EQ(r.jobs_sent(0)[1], "everywhere");
  // `after` ran on whichever host freed first once both copies started.
  std::size_t afters = 0, everywhere_on_b = 0;
  for (const auto& command : r.jobs_sent(1)) {
    afters += command == "after";
    everywhere_on_b += command == "everywhere";
  }
  for (const auto& command : r.jobs_sent(0)) afters += command == "after";
  EXPECT_EQ(everywhere_on_b, 1u);
  EXPECT_EQ(afters, 1u);
}

TEST(EveryHost, SkipsHostsWithFewerSlotsThanItNeeds) {
  Campaign r(make_fleet({{"a", {"0", "1"}}, {"b", {"0"}}}));
  r.source.jobs.push_back(on_every_host("pair <<gpu>>", 2));
  r.scheduler->start();
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"pair 0,1"}));
  EXPECT_TRUE(r.jobs_sent(1).empty());
}

TEST(EveryHost, RunsOnTheHostsThatConnected) {
  Campaign r(make_fleet({{"a", {"0"}}, {"b", {"0"}}}));
  r.executors[1]->connect_error = Status{ErrorKind::auth, "b: denied"};
  r.source.jobs.push_back(on_every_host("everywhere"));
  r.scheduler->start();
  r.run();
  EXPECT_EQ(r.jobs_sent(0), (std::vector<std::string>{"everywhere"}));
  EXPECT_TRUE(r.jobs_sent(1).empty());
}

// A coordinator, a server on each host given its address, a client once
// all of them are ready; `slots_each` slots per host.
struct PetalsShape {
  explicit PetalsShape(std::vector<std::string> gpus)
      : run(make_fleet({{"a", gpus}, {"b", gpus}, {"c", gpus}})) {
    for (auto* t : run.executors)
      t->outcome = [](const std::string& command) {
        FakeExecutor::Outcome outcome = lasting(2);
        if (contains(command, "serve")) outcome.steps = 1'000'000;
        if (contains(command, "serve dht")) outcome.output = "Started at 10.9.9.9:4242\n";
        if (contains(command, "serve peer")) outcome.output = "peer up\n";
        return outcome;
      };
    JobSpec dht{"serve dht", {}, 1, 1};
    dht.service.emplace();
    dht.service->name = "dht";
    dht.service->ready_log = R"(Started at (?<addr>\S+))";
    run.source.jobs.push_back(dht);
    JobSpec server = on_every_host("serve peer --initial <<dht.addr>> <<hostname>>");
    server.service.emplace();
    server.service->name = "server";
    server.service->ready_log = "peer up";
    run.source.jobs.push_back(server);
    run.source.add("client <<dht.addr>>");
  }
  std::size_t at(const std::string& prefix) const {
    const auto& events = run.observer.events;
    for (std::size_t i = 0; i < events.size(); ++i)
      if (events[i].rfind(prefix, 0) == 0) return i;
    return events.size();
  }
  Campaign run;
};

TEST(EveryHost, AServerOnEachHostIsReadyBeforeTheClientAndStoppedAfterIt) {
  PetalsShape p({"0", "1"});
  p.run.scheduler->start();
  EXPECT_EQ(p.run.run(), 0);
  for (std::string host : {"a", "b", "c"}) {
    auto sent = p.run.jobs_sent(host == "a" ? 0 : host == "b" ? 1 : 2);
    EXPECT_EQ(std::count(sent.begin(), sent.end(), "serve peer --initial 10.9.9.9:4242 " + host),
              1)
        << host;
  }
  std::size_t client = p.at("start a gpu=1 client");
  for (std::string host : {"a", "b", "c"})
    EXPECT_LT(p.at("ready serve peer --initial 10.9.9.9:4242 " + host), client) << host;
  // Every service got TERM at the end: the coordinator and three servers.
  std::size_t terms = 0;
  for (auto* t : p.run.executors)
    for (auto [task, signal] : t->signals) terms += signal == SIGTERM;
  EXPECT_EQ(terms, 4u);
}

TEST(EveryHost, AHostWhoseSlotsServicesHoldIsNotWaitedFor) {
  PetalsShape p({"0"});
  p.run.scheduler->start();
  // a's one slot holds the coordinator: servers run on b and c; then the
  // client has no slot that will free, which is said, and the run ends.
  EXPECT_EQ(p.run.run(), 1);
  ASSERT_FALSE(p.run.observer.notices.empty());
  EXPECT_TRUE(contains(p.run.observer.notices.back(), "services hold"))
      << p.run.observer.notices.back();
  EXPECT_EQ(p.run.jobs_sent(1).front(), "serve peer --initial 10.9.9.9:4242 b");
  EXPECT_EQ(p.run.jobs_sent(2).front(), "serve peer --initial 10.9.9.9:4242 c");
  EXPECT_EQ(p.run.jobs_sent(0), (std::vector<std::string>{"serve dht"}));

}

TEST(EveryHost, ACopyLostWithItsHostRunsAgainThereNotElsewhere) {
  Campaign r(make_fleet({{"a", {"0"}}, {"b", {"0"}}}),
             SchedulerOptions{.reconnect_first = 100ms});
  for (auto* t : r.executors) t->outcome = [](const std::string&) { return lasting(20); };
  r.source.jobs.push_back(on_every_host("everywhere <<hostname>>"));
  r.scheduler->start();
  r.tick();
  r.executors[0]->drop();
  EXPECT_EQ(r.run(), 0);
  EXPECT_EQ(r.jobs_sent(0),
            (std::vector<std::string>{"everywhere a", "everywhere a"}));
  EXPECT_EQ(r.jobs_sent(1), (std::vector<std::string>{"everywhere b"}));
}

}  // namespace
}  // namespace runner
