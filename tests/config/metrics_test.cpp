// Tests for the `metrics:` key: its place in a queue entry (accepted as the
// one mapping value, checked, expanded, written back) and the last value a
// pattern finds in a log.
#include "runner/config/metrics.h"

#include <gtest/gtest.h>

#include <string>

#include "runner/config/config_error.h"
#include "runner/config/queue_entry.h"
#include "support/config_failure.h"
#include "support/value_of.h"

namespace runner {
namespace {

Result<QueueEntry> parsed(const std::string& yaml) {
  return parse_queue_entry(YAML::Load(yaml)[0], "queue.yaml");
}

QueueEntry entry_from(const std::string& yaml) { return testing::value_of(parsed(yaml)); }

TEST(MetricsKey, IsTheOneMappingValueAndEveryJobOfTheEntryCarriesIt) {
  QueueEntry entry = entry_from(
      "- command: bench --batch <<batch>>\n"
      "  batch: [8, 16]\n"
      "  metrics: {throughput: 'throughput: ([0-9.]+)', loss: 'loss=(\\S+)'}\n");
  std::vector<JobSpec> jobs = expand(entry);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].params, (Params{{"batch", "16"}}));
  EXPECT_EQ(jobs[1].metrics,
            (Params{{"throughput", "throughput: ([0-9.]+)"}, {"loss", "loss=(\\S+)"}}));
}

TEST(MetricsKey, RemainderAndConsumedYamlKeepItAsAMapping) {
  QueueEntry entry = entry_from(
      "- command: bench <<batch>>\n"
      "  metrics:\n"
      "    throughput: 'throughput: ([0-9.]+)'\n"
      "  batch: [8, 16]\n");
  std::vector<QueueEntry> rest = remainder_after_first(entry);
  ASSERT_EQ(rest.size(), 1u);
  std::string text = entry_to_yaml(rest[0]);
  EXPECT_EQ(text,
            "- command: bench <<batch>>\n"
            "  metrics: {throughput: \"throughput: ([0-9.]+)\"}\n"
            "  batch: [16]\n");
  EXPECT_EQ(first_job(entry_from(text)).metrics, first_job(entry).metrics);

  std::string consumed = entry_to_yaml(canonical_entry(first_job(entry)));
  EXPECT_EQ(first_job(entry_from(consumed)).metrics,
            (Params{{"throughput", "throughput: ([0-9.]+)"}}));
}

TEST(MetricsKey, OtherKeysStillRefuseAMapping) {
  EXPECT_FALSE(parsed("- command: x\n  model: {a: b}\n").ok());
}

TEST(MetricsKey, BadPatternsAreConfigErrorsAtTheirLineWithTheFix) {
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {"- command: x\n  metrics:\n    loss: 'loss: [0-9.]+'\n", "has no capture group"},
           {"- command: x\n  metrics:\n    loss: 'loss: ([0-9.]+'\n", "does not compile"},
           {"- command: x\n  metrics:\n    loss: [a, b]\n", "one regular expression"},
           {"- command: x\n  metrics: 'loss: (.*)'\n  #\n", "must be a mapping"}}) {
    {
      ConfigError error = testing::failure_of(parsed(text));
      EXPECT_EQ(error.file(), "queue.yaml");
      EXPECT_GE(error.line(), 2) << text;
      EXPECT_NE(error.detail().find(needle), std::string::npos) << error.what();
      EXPECT_NE(error.detail().find("like"), std::string::npos) << error.what();
    }
  }
}

TEST(MetricsKey, TheErrorNamesTheMetricAndItsLine) {
  {
    ConfigError error =
        testing::failure_of(parsed("- command: x\n  metrics:\n    ok: 'a(1)'\n    loss: 'loss'\n"));
    EXPECT_EQ(error.line(), 4);
    EXPECT_NE(error.detail().find("metric `loss`, `loss`, has no capture group"), std::string::npos)
        << error.detail();
  }
}

TEST(LastMetricMatch, TheLastMatchOfTheLogWins) {
  Result<Pattern> pattern = Pattern::compile("throughput: ([0-9.]+)");
  ASSERT_TRUE(pattern) << pattern.status().message();
  auto value = [&](std::string_view log) { return last_metric_match(*pattern, log).value; };
  EXPECT_EQ(value("throughput: 1\nthroughput: 2 throughput: 3\nend\n"), "3");
  EXPECT_EQ(value("step 1\rthroughput: 4.5\rstep 2"), "4.5");
  EXPECT_EQ(value("throughput: 7"), "7");
  EXPECT_EQ(value("nothing here\n"), std::nullopt);
  EXPECT_EQ(value(""), std::nullopt);
}

TEST(LastMetricMatch, ALineWhoseMatchRunsIntoTheLimitIsPassedOverAndSaid) {
  Result<Pattern> pattern = Pattern::compile("(?:(x+x+)+y|loss (\\d+))");
  ASSERT_TRUE(pattern) << pattern.status().message();
  MetricMatch found = last_metric_match(*pattern, "loss 4\n" + std::string(40, 'x') + "\n");
  EXPECT_EQ(found.value, "");  // the first group, which took no part in `loss 4`
  EXPECT_FALSE(found.passed_over.ok());
  EXPECT_EQ(found.passed_over.message(), "match limit exceeded");
  MetricMatch clean = last_metric_match(*pattern, "loss 4\n");
  EXPECT_TRUE(clean.passed_over.ok());
}

TEST(MetricsYaml, RoundTripsInOrder) {
  Params metrics{{"b", "x: (1)"}, {"a", "'q' (\\d+)"}};
  EXPECT_EQ(metrics_from_yaml(metrics_to_yaml(metrics)), metrics);
  EXPECT_TRUE(metrics_from_yaml("[1, 2]").empty());
}

}  // namespace
}  // namespace runner
