#include "runner/config/service.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "runner/config/job_render.h"
#include "runner/config/queue_entry.h"
#include "support/value_of.h"

namespace runner {
namespace {

JobSpec job_from(const std::string& yaml) {
  return first_job(testing::value_of(parse_queue_entry(YAML::Load(yaml)[0], "queue.yaml")));
}

std::string error_of(const std::string& yaml) {
  Result<QueueEntry> entry = parse_queue_entry(YAML::Load(yaml)[0], "queue.yaml");
  if (entry) return "no error";
  return std::to_string(entry.status().line()) + ": " + entry.status().message();
}

TEST(ServiceKeys, GiveTheJobItsService) {
  JobSpec job = job_from(
      "- command: hivemind-dht\n"
      "  service: dht\n"
      "  ready_log: 'Started at (?<addr>\\S+)'\n"
      "  ready_port: 31337\n"
      "  ready: curl -sf localhost:8080\n"
      "  ready_timeout: 2m\n"
      "  after: tc qdisc del dev eth0 root\n"
      "  restart: on-failure\n"
      "  model: m\n");
  ASSERT_TRUE(job.service);
  EXPECT_EQ(job.service->name, "dht");
  EXPECT_EQ(job.service->ready_log, "Started at (?<addr>\\S+)");
  EXPECT_EQ(job.service->ready_port, "31337");
  EXPECT_EQ(job.service->ready, "curl -sf localhost:8080");
  EXPECT_EQ(job.service->ready_timeout, std::chrono::minutes(2));
  EXPECT_EQ(job.service->after, "tc qdisc del dev eth0 root");
  EXPECT_TRUE(job.service->restart_on_failure);
  EXPECT_EQ(job.params, (Params{{"model", "m"}}));
  // consumed.yaml gives it back.
  QueueEntry canonical = canonical_entry(job);
  JobSpec again = job_from(entry_to_yaml(canonical));
  ASSERT_TRUE(again.service);
  EXPECT_EQ(again.service->name, "dht");
  EXPECT_EQ(again.service->ready_timeout_text, "2m");
  EXPECT_TRUE(again.service->restart_on_failure);
}

TEST(ServiceKeys, TrueIsAServiceWithoutANameAndFalseIsNone) {
  EXPECT_EQ(job_from("- command: x\n  service: true\n").service->name, "");
  EXPECT_FALSE(job_from("- command: x\n  service: false\n").service);
  EXPECT_FALSE(job_from("- command: x\n").service);
}

TEST(ServiceKeys, BadValuesAndKeysWithoutAServiceAreErrors) {
  EXPECT_EQ(error_of("- command: x\n  ready_port: 31337\n"),
            "2: `ready_port` is for a service; add `service: NAME` to this entry, or remove "
            "`ready_port`");
  EXPECT_EQ(error_of("- command: x\n  service: a b\n").substr(0, 41),
            "2: `service` is true, false or the servic");
  EXPECT_EQ(error_of("- command: x\n  service: s\n  ready_port: 99999\n"),
            "3: `ready_port` must be a TCP port (1 to 65535) or a template like <<port>>, not "
            "`99999`");
  EXPECT_EQ(job_from("- command: x\n  service: s\n  ready_port: <<port>>\n").service->ready_port,
            "<<port>>");
  EXPECT_EQ(error_of("- command: x\n  service: s\n  restart: always\n"),
            "3: `restart` is on-failure or no, not `always`");
  EXPECT_NE(error_of("- command: x\n  service: s\n  ready_log: '(unclosed'\n")
                .find("`ready_log` is not a regular expression"),
            std::string::npos);
  EXPECT_EQ(error_of("- command: x\n  service: s\n  nodes: 2\n"),
            "3: a service runs on one host; remove `nodes` or `service`");
}

TEST(ReadyPattern, NamedAndNumberedGroupsBecomeVariables) {
  auto pattern = compile_ready_pattern(R"(at (?<addr>[^ :]+):(\d+) (?:id) \((?<id>\w+)\) [(])");
  ASSERT_TRUE(pattern) << pattern.status().message();
  EXPECT_EQ(pattern->group_names(), (std::vector<std::string>{"addr", "2", "id"}));
  Result<std::optional<PatternMatch>> match =
      pattern->search("booting\nStarted at 10.0.0.1:4242 id (Qm7) (\n");
  ASSERT_TRUE(match && *match);
  EXPECT_EQ(ready_variables("dht", *pattern, **match),
            (Params{{"dht.addr", "10.0.0.1"}, {"dht.2", "4242"}, {"dht.id", "Qm7"}}));
}

TEST(ServiceKeys, LaterEntriesMayUseAServicesVariables) {
  Fleet fleet = testing::value_of(parse_hosts("- localhost\n", "hosts.yaml"));
  auto entries = [](const std::string& yaml) {
    std::vector<QueueEntry> result;
    for (const YAML::Node& item : YAML::Load(yaml))
      result.push_back(testing::value_of(parse_queue_entry(item, "q")));
    return result;
  };
  EXPECT_TRUE(
      validate_jobs(entries("- command: dht\n  service: dht\n  ready_log: 'at (?<addr>.+)'\n"
                            "- client <<dht.addr>>\n"),
                    fleet, "q"));
  EXPECT_FALSE(validate_jobs(entries("- client <<dht.addr>>\n- command: dht\n  service: dht\n"),
                             fleet, "q"));
}

}  // namespace
}  // namespace runner
