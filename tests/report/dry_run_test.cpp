// The dry-run plan: which slot each job would get and what it would run.
#include "runner/report/dry_run.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support/value_of.h"

namespace runner {
namespace {

std::vector<QueueEntry> entries(const std::string& yaml) {
  std::vector<QueueEntry> result;
  for (const YAML::Node& item : YAML::Load(yaml))
    result.push_back(testing::value_of(parse_queue_entry(item, "q.yaml")));
  return result;
}

// The whole plan, gathered.
std::vector<PlannedJob> whole_plan(const std::vector<QueueEntry>& entries, const Fleet& fleet,
                                   const std::string& queue_path, JobPlacement placement) {
  std::vector<PlannedJob> plan;
  Status planned = plan_jobs(entries, fleet, queue_path, placement,
                             [&](const PlannedJob& job) { plan.push_back(job); });
  EXPECT_TRUE(planned.ok()) << planned.located_message();
  return plan;
}

// Why the plan of `entries` fails, and how many jobs it planned before.
std::pair<Status, std::size_t> plan_failure(const std::vector<QueueEntry>& entries,
                                            const Fleet& fleet) {
  std::size_t planned_jobs = 0;
  Status planned = plan_jobs(entries, fleet, "q.yaml", JobPlacement::queue,
                             [&](const PlannedJob&) { ++planned_jobs; });
  return {planned, planned_jobs};
}

std::vector<std::string> lines(const std::vector<PlannedJob>& plan) {
  std::vector<std::string> out;
  for (const PlannedJob& job : plan)
    out.push_back(std::to_string(job.wave) + " [" + job.label + "] " + job.command);
  return out;
}

TEST(DryRun, QueueJobsTakeFreeSlotsInOrderThenTheFirstToFree) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: [a, b]\n  gpu: [0, 1]\n", "h.yaml"));
  auto plan = whole_plan(entries("- command: run <<m>> on <<hostname>>:<<gpu>>\n"
                                 "  m: [1, 2, 3, 4, 5, 6]\n"),
                         fleet, "q.yaml", JobPlacement::queue);
  ASSERT_EQ(lines(plan),
            (std::vector<std::string>{"0 [a gpu=0] run 1 on a:0", "0 [a gpu=1] run 2 on a:1",
                                      "0 [b gpu=0] run 3 on b:0", "0 [b gpu=1] run 4 on b:1",
                                      "1 [a gpu=0] run 5 on a:0", "1 [a gpu=1] run 6 on a:1"}));
  EXPECT_EQ(plan[5].number, 6u);
}

TEST(DryRun, MultiSlotJobsWaitForEnoughSlotsOfOneHost) {
  Fleet fleet = testing::value_of(
      parse_hosts("- hostname: a\n  gpu: [0, 1, 2]\n- hostname: b\n  gpu: [0, 1]\n", "h.yaml"));
  auto plan = whole_plan(entries("- one <<gpu>>\n"
                                 "- command: two <<gpu>>\n  slots: 2\n"
                                 "- command: three <<gpu>>\n  slots: 3\n"
                                 "- four <<gpu>>\n"),
                         fleet, "q.yaml", JobPlacement::queue);
  EXPECT_EQ(lines(plan),
            (std::vector<std::string>{"0 [a gpu=0] one 0", "0 [a gpu=1,2] two 1,2",
                                      "1 [a gpu=0,1,2] three 0,1,2", "1 [b gpu=0] four 0"}));
}

TEST(DryRun, AJobThatSpansHostsIsPlannedRankByRankWhenAllItsHostsAreFree) {
  Fleet fleet = testing::value_of(
      parse_hosts("- hostname: a\n  gpu: [0, 1]\n- hostname: b\n  gpu: [0, 1]\n  addr: 10.0.0.2\n"
                  "- hostname: c\n  gpu: [0]\n",
                  "h.yaml"));
  auto plan = whole_plan(entries("- one <<gpu>>\n"
                                 "- command: r<<rank>>/<<nnodes>> <<hostname>> <<gpu>> "
                                 "<<master_addr>>:<<master_port>> <<hosts>>\n"
                                 "  nodes: 2\n  slots: 2\n"),
                         fleet, "q.yaml", JobPlacement::queue);
  ASSERT_EQ(lines(plan),
            (std::vector<std::string>{
                "0 [a gpu=0] one 0", "1 [a gpu=0,1 rank 0] r0/2 a 0,1 a:29500 a,10.0.0.2",
                "1 [b gpu=0,1 addr=10.0.0.2,10.0.0.2 rank 1] r1/2 b 0,1 a:29500 a,10.0.0.2"}));
  EXPECT_EQ(plan[2].number, 2u);
  EXPECT_EQ(plan[2].rank, 1);
}

TEST(DryRun, BroadcastRunsEachJobOnEverySlot) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: a\n  slots: 2\n- b\n", "h.yaml"));
  auto plan =
      whole_plan(entries("- setup <<slots>>\n- check\n"), fleet, "q.yaml", JobPlacement::broadcast);
  EXPECT_EQ(lines(plan),
            (std::vector<std::string>{"0 [a #0] setup 0", "0 [a #1] setup 1", "0 [b] setup 0",
                                      "1 [a #0] check", "1 [a #1] check", "1 [b] check"}));
}

TEST(DryRun, JobsAfterAServiceUseTheVariablesItsReadyLineWillGive) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: a\n  slots: 2\n", "h.yaml"));
  auto plan = whole_plan(entries("- command: dht\n  service: dht\n"
                                 "  ready_log: 'peer at (?<addr>\\S+) port (\\d+)'\n"
                                 "- client --peer <<dht.addr>>:<<dht.2>>\n"),
                         fleet, "q.yaml", JobPlacement::queue);
  EXPECT_EQ(lines(plan), (std::vector<std::string>{
                             "0 [a #0] dht", "0 [a #1] client --peer <<dht.addr>>:<<dht.2>>"}));
}

TEST(DryRun, AServicesVariableBeforeTheServiceIsAnError) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: a\n  slots: 2\n", "h.yaml"));
  auto [planned, jobs] = plan_failure(entries("- client --peer <<dht.addr>>\n"
                                              "- command: dht\n  service: dht\n"
                                              "  ready_log: 'peer at (?<addr>\\S+)'\n"),
                                      fleet);
  EXPECT_EQ(planned.located_message(),
            "q.yaml:1:3: <<dht.addr>> is not defined on a #0 (define it in the job or on every "
            "slot of the hosts that can run it)");
  EXPECT_EQ(jobs, 0u);
}

TEST(DryRun, AJobThatFitsNoHostIsAnError) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: a\n  slots: 2\n", "h.yaml"));
  auto [planned, jobs] = plan_failure(entries("- small\n- command: big\n  slots: 3\n"), fleet);
  EXPECT_EQ(planned.located_message(),
            "q.yaml:2:3: this job needs 3 slots of one host, but no host has that many");
  EXPECT_EQ(jobs, 1u);
}

TEST(DryRun, PrintsNumberedLinesWithMultiLineCommandsIndented) {
  Fleet fleet = testing::value_of(parse_hosts("- hostname: a\n  gpu: [0]\n", "h.yaml"));
  std::string yaml = "- echo x\n";
  for (int i = 0; i < 9; ++i) yaml += "- echo y\n";
  yaml += "- |-\n  cd /work\n  python train.py --gpu <<gpu>>\n";
  std::vector<QueueEntry> queue = entries(yaml);
  std::string text;
  EXPECT_TRUE(plan_jobs(queue, fleet, "q.yaml", JobPlacement::queue, [&](const PlannedJob& job) {
                text += format_planned_job(job, plan_number_width(queue));
              }).ok());
  EXPECT_EQ(text.substr(0, text.find('\n') + 1), " 1 [a gpu=0] echo x\n");
  EXPECT_NE(text.find("\n11 [a gpu=0] cd /work\n       python train.py --gpu 0\n"),
            std::string::npos)
      << text;
}

TEST(DryRun, ABroadcastStepsPushComesBeforeItsCommandOrAlone) {
  Fleet fleet = testing::value_of(parse_hosts("- a\n", "h.yaml"));
  std::vector<QueueEntry> queue =
      entries("- push: [data, tools]\n  push_to: work\n  command: ./prepare.sh\n- push: more\n");
  std::string text;
  EXPECT_TRUE(
      plan_jobs(queue, fleet, "q.yaml", JobPlacement::broadcast, [&](const PlannedJob& job) {
        text += format_planned_job(job, plan_number_width(queue));
      }).ok());
  EXPECT_EQ(text,
            "1 [a] (push data tools into work) ./prepare.sh\n"
            "2 [a] (push more into the login directory)\n");
}

TEST(DryRun, NumbersAreAsWideAsTheLastJobsOfAProductNeverExpanded) {
  EXPECT_EQ(plan_number_width(entries("- a\n")), 1u);
  EXPECT_EQ(plan_number_width(entries("- command: a <<x>> <<y>>\n  x: [1, 2, 3, 4]\n"
                                      "  y: [1, 2, 3]\n- b\n")),
            2u);
}

}  // namespace
}  // namespace runner
